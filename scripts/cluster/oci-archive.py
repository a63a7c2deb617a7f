#!/usr/bin/env python3
"""Packs files into a one-layer OCI image archive that `ctr images import` loads under NAME.

Usage: oci-archive.py NAME OUT.tar ENTRYPOINT-JSON SRC:DEST…

The node's own images (the pause sandbox, CoreDNS) are single static binaries: no base image, no
registry and no image builder are needed to run them, only this. The archive is reproducible (fixed
times and owners), so the same binary gives the same image id.
"""

import hashlib
import io
import json
import sys
import tarfile


def tar_bytes(entries):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def blob(data, media_type):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return {"mediaType": media_type, "digest": digest, "size": len(data)}, data


def main(name, out, entrypoint, *files):
    layer_files = []
    for spec in files:
        source, dest = spec.split(":", 1)
        with open(source, "rb") as f:
            layer_files.append((dest.lstrip("/"), f.read(), 0o755))
    layer_descriptor, layer = blob(tar_bytes(layer_files), "application/vnd.oci.image.layer.v1.tar")
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Entrypoint": json.loads(entrypoint),
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "User": "65532:65532",
        },
        "rootfs": {"type": "layers", "diff_ids": [layer_descriptor["digest"]]},
    }
    config_descriptor, config_data = blob(
        json.dumps(config, sort_keys=True).encode(), "application/vnd.oci.image.config.v1+json"
    )
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_descriptor,
        "layers": [layer_descriptor],
    }
    manifest_descriptor, manifest_data = blob(
        json.dumps(manifest, sort_keys=True).encode(), "application/vnd.oci.image.manifest.v1+json"
    )
    # containerd names the imported image after io.containerd.image.name.
    manifest_descriptor["annotations"] = {
        "io.containerd.image.name": name,
        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1],
    }
    index = {"schemaVersion": 2, "manifests": [manifest_descriptor]}
    entries = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}', 0o644)]
    for descriptor, data in [(layer_descriptor, layer), (config_descriptor, config_data), (manifest_descriptor, manifest_data)]:
        entries.append(("blobs/sha256/" + descriptor["digest"].split(":")[1], data, 0o644))
    entries.append(("index.json", json.dumps(index).encode(), 0o644))
    with open(out, "wb") as f:
        f.write(tar_bytes(entries))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
