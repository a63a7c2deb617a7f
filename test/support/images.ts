// The images the node suite imports into the node's containerd (there is no registry to pull from).

/** Archives to import: NODE_SUITE_IMAGES (space-separated paths of docker or OCI archives). */
export async function imageArchives(): Promise<string[]> {
  const listed = process.env.NODE_SUITE_IMAGES?.split(" ").filter(Boolean) ?? [];
  if (listed.length === 0) throw new Error("NODE_SUITE_IMAGES names no image archive to import");
  return listed;
}
