// nats.js v3 logs in with nsc-style creds files (credsAuthenticator) and prints one normalized line per
// step, the same transcript as tests/go/credsclient and tests/c/credsclient.c: a round trip on greet.a,
// a publish to secret.x refused by the user's permissions, a login with the revoked user's creds refused.
// Usage: node creds.mjs <nats-url> <user creds> <revoked user creds>
import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, PermissionViolationError } from "@nats-io/transport-node";

const TIMEOUT_MS = 30_000;
const [url, credsFile, revokedFile] = process.argv.slice(2);
const enc = new TextEncoder();
const dec = new TextDecoder();

function within(promise, what) {
  return Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), TIMEOUT_MS).unref()),
  ]);
}

const creds = (file) => credsAuthenticator(new Uint8Array(readFileSync(file)));

const nc = await connect({ servers: url, authenticator: creds(credsFile), reconnect: false, timeout: TIMEOUT_MS });
console.log("connected");
const violation = (async () => {
  for await (const s of nc.status()) {
    if (s.type === "error") return s.error;
  }
  return new Error("closed without an error");
})();

const sub = nc.subscribe("greet.>", { max: 1 });
nc.publish("greet.a", enc.encode("hello"));
for await (const m of sub) {
  console.log(`received ${m.subject} ${dec.decode(m.data)}`);
}

nc.publish("secret.x", enc.encode("no"));
const err = await within(violation, "permissions violation");
if (err instanceof PermissionViolationError) {
  console.log(`violation ${err.operation} ${err.subject}`);
} else {
  console.log(`error ${err}`);
}
await nc.close();

try {
  const revoked = await connect({ servers: url, authenticator: creds(revokedFile), reconnect: false, timeout: TIMEOUT_MS });
  console.log("revoked connected");
  await revoked.close();
} catch (e) {
  console.log(/authorization violation/i.test(String(e?.message ?? e)) ? "revoked Authorization Violation" : `revoked ${e}`);
}
