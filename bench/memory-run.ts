// The service's memory alone: idle, then draining a burst of 20,000 events (BENCH_SCALE scales it),
// with the Node flags it ships with. Run: npm run bench:memory (npm run bench measures it too).
import { startBenchServer } from "./database.js";
import { formatLoad, runBench } from "./entry.js";
import { describeMemory, measureServiceMemory, memoryTargets } from "./memory.js";
import { startReceiverProcess } from "./receiver-process.js";

const events = Math.max(1_000, Math.round(20_000 * Number(process.env.BENCH_SCALE ?? 1)));

async function main(): Promise<void> {
  const server = await startBenchServer();
  const receiver = await startReceiverProcess();
  try {
    console.log(`Memory benchmark (load average before: ${formatLoad()})`);
    const memory = await measureServiceMemory(server, receiver, events);
    console.log(`  ${describeMemory(memory, events)}`);
    for (const [target, met] of memoryTargets(memory)) console.log(`  ${met ? "PASS" : "FAIL"} ${target}`);
    console.log(`  load average after: ${formatLoad()}`);
  } finally {
    await receiver.close();
    await server.stop();
  }
}

runBench(main);
