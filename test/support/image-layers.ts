import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { rootCertificates } from "node:tls";

// What an image archive (`docker save`, `podman save`) holds: manifest.json names the layers, each an
// uncompressed tar stored as it is, so a file's bytes appear in the archive verbatim.

async function layersOf(archive: string): Promise<string[]> {
  const manifest = spawnSync("tar", ["-xOf", archive, "manifest.json"], { encoding: "utf8" });
  if (manifest.status !== 0) throw new Error(`no manifest.json in ${archive}: ${manifest.stderr}`);
  return (JSON.parse(manifest.stdout) as { Layers: string[] }[]).flatMap((image) => image.Layers);
}

/** Every path in every layer of the image. */
export async function imageFiles(archive: string): Promise<string[]> {
  const files: string[] = [];
  for (const layer of await layersOf(archive)) {
    const listed = spawnSync("bash", ["-c", 'tar -xOf "$1" "$2" | tar -t', "list", archive, layer], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    if (listed.status !== 0) throw new Error(`cannot list layer ${layer}: ${listed.stderr}`);
    files.push(...listed.stdout.split("\n").filter(Boolean));
  }
  return files;
}

const certificatePattern = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const bodyOf = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, "");

/** The certificates of a CA bundle that Node's own list lacks (a TLS-intercepting proxy's, for one). */
export function hostOnlyCertificates(bundle: string): string[] {
  const nodes = new Set(rootCertificates.map(bodyOf));
  return (bundle.match(certificatePattern) ?? []).filter((pem) => !nodes.has(bodyOf(pem)));
}

/**
 * A full line of the PEM's base64 from its middle: the same bytes wherever this text of the certificate
 * is stored (a copy of the bundle; line lengths differ between sources: 64 in Debian's, 72 in Node's).
 */
const markerOf = (pem: string) => {
  const lines = pem.split("\n").filter((line) => /^[A-Za-z0-9+/]+$/.test(line));
  const full = lines.filter((line) => line.length === Math.max(...lines.map((each) => each.length)));
  return full[Math.floor(full.length / 2)] as string;
};

/**
 * The given certificates found anywhere in the archive's bytes. Node's first root certificate, which the
 * node binary holds, must be found: otherwise the search could not see file contents at all.
 */
export async function imageLayersContain(archive: string, certificates: string[]): Promise<string[]> {
  const bytes = await readFile(archive);
  if (!bytes.includes(markerOf(rootCertificates[0] as string)))
    throw new Error(`the archive's file contents are not searchable (compressed layers?): ${archive}`);
  return certificates.filter((pem) => bytes.includes(markerOf(pem)));
}
