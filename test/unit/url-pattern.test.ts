import { expect, it } from "vitest";
import { httpUrlPattern } from "../../src/http/schemas.js";

// The webhook URL pattern is published in the OpenAPI document: a URL it admits that URL parsing
// refuses is a schema-valid request answered 400 (schemathesis found one: nine IPv6 groups).
const hosts = [
  "[6f:0B:0:Cdee:Cd0B::d4DB:2:1:A754:191.254.254.167]",
  "[::1]",
  "[::]",
  "[1::]",
  "[2001:db8::1]",
  "[::ffff:10.0.0.1]",
  "[1:2:3:4:5:6:7:8]",
  "[1:2:3:4:5:6:1.2.3.4]",
  "[1::2:3:4:5:6:7]",
  "[1:2:3:4:5:6:7::]",
  "[::2:3:4:5:6:7:8]",
  "[1:2:3:4:5:6:7:8:9]",
  "[1::2::3]",
  "[fe80::1:2.3.4.5]",
  "[1:2:3:4:5::1.2.3.4]",
  "[1:2:3:4:5:6::1.2.3.4]",
  "[::1.2.3.4]",
  "[1:2:3:4:5:6:7:1.2.3.4]",
];

it.each(hosts)("admits https://%s/ exactly when URL parsing does", (host) => {
  const url = `https://${host}/hook`;
  expect(httpUrlPattern.test(url)).toBe(URL.canParse(url));
});
