import { loadConfig } from "../../src/app/config.js";
import type { DiagnosisSettings } from "../../src/operator/rollouts/rollout-diagnosis.js";

/** The rollout diagnosis settings' defaults, as app/config.ts parses an empty environment. */
export const diagnosisDefaults: DiagnosisSettings = loadConfig({}).kubernetes.diagnosis;
