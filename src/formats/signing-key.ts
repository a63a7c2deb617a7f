// A webhook's signing key is text: what the API was given, or a Kubernetes Secret's value. A Secret
// value need not be text, and HMAC must then use its raw bytes (a UTF-8 decoding would replace what is
// not UTF-8 and sign with another key): such a value is kept as its base64 behind a NUL-led marker, a
// form no API secret can take (the API refuses NUL in secrets).

const bytesMarker = "\u0000base64:";

/** A Kubernetes Secret value as a signing key: its text when it is valid UTF-8, else its bytes, marked. */
export function signingKeyFromSecretValue(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : bytesMarker + bytes.toString("base64");
}

/** What HMAC signs with: the raw bytes of a marked key, else the key's text. */
export function hmacKey(key: string): string | Buffer {
  return key.startsWith(bytesMarker) ? Buffer.from(key.slice(bytesMarker.length), "base64") : key;
}
