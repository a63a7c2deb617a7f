// A configured admin key is chosen by a person, and one guessed is the whole service. Keys the service
// generates carry 256 random bits; a configured one must come near enough that guessing it, online or
// from a copied digest, is out of reach. The estimate is deliberately simple so the rule is easy to
// state: length × log2(number of different characters), which is the entropy of a random key drawn
// from that many symbols and less for anything with a pattern (`aaaa…` is 0 bits, `abcabc…` little).

export const minimumKeyLength = 24;
export const minimumKeyBits = 96;

/** The estimated strength of a key in bits: length × log2(distinct characters). */
export function estimatedKeyBits(key: string): number {
  const characters = [...key];
  const distinct = new Set(characters).size;
  return distinct < 2 ? 0 : characters.length * Math.log2(distinct);
}

/** Why `key` is too weak to be an admin key (naming `source`, never the key), or undefined. */
export function keyWeakness(key: string, source: string): string | undefined {
  const length = [...key].length;
  const bits = estimatedKeyBits(key);
  if (length >= minimumKeyLength && bits >= minimumKeyBits) return undefined;
  const problem =
    length < minimumKeyLength
      ? `is ${length} characters long; it must have at least ${minimumKeyLength}`
      : `repeats too few different characters (about ${Math.floor(bits)} bits, at least ${minimumKeyBits} needed)`;
  return `${source} ${problem}. Use a random key, such as the output of \`openssl rand -hex 24\`.`;
}
