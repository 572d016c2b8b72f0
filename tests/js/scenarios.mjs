// Real-client scenarios: nats.js v3 (@nats-io/transport-node) against a server URL.
// Usage: node scenarios.mjs <nats-url> <scenario>   (node scenarios.mjs --list prints the names)
// The "auth" scenario expects a server configured with user "alice" / password "s3cret", "token" the
// token "t0k3n", "nkey" the nkey user of NKEY_SEED, and "permissions" the users described there
// (JsClient/JsClientTests.cs configures each). "ldm" is driven from Operations/LameDuckJsTests.cs, which
// puts the server into lame duck mode once the scenario prints READY.
// Exit code 0 = scenario passed; otherwise a message on stderr says what went wrong.
import { createHash, randomBytes } from "node:crypto";
import {
  AuthorizationError,
  connect,
  createInbox,
  headers,
  nkeyAuthenticator,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
} from "@nats-io/transport-node";
import { wsconnect } from "@nats-io/nats-core";

// User nkey seed whose public key is UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAR.
const NKEY_SEED = "SUADI37IG7T4RJFKKSPJ7566JGBFMZV6H37EJWM4WUBHCP56BNM7Z7JNCM";
const enc = new TextEncoder();
const dec = new TextDecoder();
const TIMEOUT_MS = 30_000;

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

// Connecting must fail with an authorization error.
async function expectRefused(url, opts, what) {
  let refused;
  try {
    const bad = await open(url, { ...opts, reconnect: false });
    await bad.close();
  } catch (err) {
    refused = err;
  }
  check(refused, `${what} must be refused`);
  const isAuth = refused instanceof AuthorizationError || refused?.cause instanceof AuthorizationError ||
    /authorization violation/i.test(String(refused?.message));
  check(isAuth, `${what}: expected an authorization error, got ${refused?.name}: ${refused?.message}`);
}

// A publish and subscribe round trip on a fresh subject.
async function roundTrip(nc, subject) {
  const sub = nc.subscribe(subject, { max: 1 });
  nc.publish(subject, enc.encode("in"));
  equal((await collect(sub, 1, `round trip on ${subject}`))[0].string(), "in", "payload");
}

// Collects exactly n messages from a subscription, or fails with what arrived so far.
async function collect(sub, n, what) {
  const got = [];
  if (n === 0) return got;
  for await (const m of sub) {
    got.push(m);
    if (got.length === n) break;
  }
  check(got.length === n, `${what}: expected ${n} messages, got ${got.length}`);
  return got;
}

// TLS file arguments after the scenario name: CA, then optionally the client certificate and key.
function tlsOptions() {
  const [caFile, certFile, keyFile] = process.argv.slice(4);
  return certFile ? { caFile, certFile, keyFile } : { caFile };
}

async function open(url, opts = {}) {
  return connect({ servers: url, timeout: 10_000, ...opts });
}

const scenarios = {
  async pubsub(url) {
    const nc = await open(url);
    const sub = nc.subscribe("js.basic");
    const done = collect(sub, 3, "pubsub");
    for (const s of ["one", "two", "three"]) nc.publish("js.basic", enc.encode(s));
    const msgs = await done;
    equal(msgs.map((m) => m.subject), ["js.basic", "js.basic", "js.basic"], "subjects");
    equal(msgs.map((m) => m.string()), ["one", "two", "three"], "payloads");
    await nc.close();
  },

  async wildcards(url) {
    const nc = await open(url);
    // Callbacks record subjects; a sentinel published last arrives after everything published before it.
    const subjects = { star: [], full: [] };
    const ends = ["star", "full"].map((key) => {
      let resolve;
      const ended = new Promise((r) => (resolve = r));
      nc.subscribe(key === "star" ? "w.*" : "w.>", {
        callback: (err, m) => {
          if (err) throw err;
          if (m.subject === "w.end") resolve();
          else subjects[key].push(m.subject);
        },
      });
      return ended;
    });
    await nc.flush();
    for (const s of ["w", "w.a", "w.a.b", "w.b", "x.a", "w.end"]) nc.publish(s, enc.encode(s));
    await Promise.all(ends);
    equal(subjects.star, ["w.a", "w.b"], "w.* subjects");
    equal(subjects.full, ["w.a", "w.a.b", "w.b"], "w.> subjects");
    await nc.close();
  },

  async queue(url) {
    const N = 300;
    const members = await Promise.all([open(url), open(url), open(url)]);
    const watcher = await open(url);
    const pub = await open(url);
    const counts = [0, 0, 0];
    const seen = new Map();
    const subs = members.map((nc, i) =>
      nc.subscribe("jobs.*", {
        queue: "workers",
        callback: (err, m) => {
          if (err) throw err;
          counts[i]++;
          seen.set(m.string(), (seen.get(m.string()) ?? 0) + 1);
        },
      })
    );
    const all = watcher.subscribe("jobs.*");
    await Promise.all([...members, watcher].map((nc) => nc.flush()));
    for (let i = 0; i < N; i++) pub.publish(`jobs.${i % 7}`, enc.encode(String(i)));
    await pub.flush();
    const watched = await collect(all, N, "plain subscriber next to the group");
    // Each member flush returns after everything routed to it earlier has been delivered.
    await Promise.all(members.map((nc) => nc.flush()));
    equal(counts.reduce((a, b) => a + b, 0), N, "queue deliveries in total");
    check(seen.size === N && [...seen.values()].every((v) => v === 1), "each message to exactly one member");
    equal(watched.map((m) => m.string()), Array.from({ length: N }, (_, i) => String(i)), "plain subscriber order");
    subs.forEach((s) => s.unsubscribe());
    await Promise.all([...members, watcher, pub].map((nc) => nc.close()));
  },

  async request(url) {
    const svc = await open(url);
    const cli = await open(url);
    svc.subscribe("svc.upper", {
      callback: (err, m) => {
        if (err) throw err;
        m.respond(enc.encode(m.string().toUpperCase()));
      },
    });
    await svc.flush();
    for (const word of ["alpha", "beta", "gamma"]) {
      const r = await cli.request("svc.upper", enc.encode(word), { timeout: 10_000 });
      equal(r.string(), word.toUpperCase(), "reply");
    }
    // A manual inbox round trip, as raw clients do it.
    const inbox = createInbox();
    check(inbox.startsWith("_INBOX."), "inbox prefix");
    const replies = cli.subscribe(inbox, { max: 1 });
    cli.publish("svc.upper", enc.encode("manual"), { reply: inbox });
    equal((await collect(replies, 1, "manual inbox"))[0].string(), "MANUAL", "manual reply");
    await Promise.all([svc.close(), cli.close()]);
  },

  async headers(url) {
    const nc = await open(url);
    const sub = nc.subscribe("h.test");
    await nc.flush();
    const h = headers();
    h.set("X-Trace", "abc-123");
    h.append("X-Multi", "one");
    h.append("X-Multi", "two");
    nc.publish("h.test", enc.encode("with headers"), { headers: h });
    nc.publish("h.test", enc.encode("no headers"));
    const [a, b] = await collect(sub, 2, "headers");
    check(a.headers, "first message has headers");
    equal(a.headers.get("X-Trace"), "abc-123", "X-Trace");
    equal(a.headers.values("X-Multi"), ["one", "two"], "X-Multi values");
    equal(a.string(), "with headers", "payload with headers");
    check(!b.headers, "second message has no headers");
    equal(b.string(), "no headers", "payload without headers");
    // Headers on a request and on its reply.
    nc.subscribe("h.svc", {
      callback: (_, m) => {
        const rh = headers();
        rh.set("X-Echo", m.headers?.get("X-Ask") ?? "missing");
        m.respond(Uint8Array.of(), { headers: rh });
      },
    });
    const qh = headers();
    qh.set("X-Ask", "42");
    const r = await nc.request("h.svc", Uint8Array.of(), { headers: qh, timeout: 10_000 });
    equal(r.headers?.get("X-Echo"), "42", "reply header");
    await nc.close();
  },

  async noresponders(url) {
    const nc = await open(url);
    let failure;
    try {
      await nc.request("nobody.listens.here", enc.encode("?"), { timeout: 10_000 });
    } catch (err) {
      failure = err;
    }
    check(failure, "request without responders must fail");
    const isNoResponders =
      failure instanceof NoRespondersError ||
      failure?.cause instanceof NoRespondersError ||
      (failure instanceof RequestError && typeof failure.isNoResponders === "function" && failure.isNoResponders());
    check(isNoResponders, `expected a no-responders error, got ${failure?.name}: ${failure?.message}`);
    await nc.close();
  },

  async echooff(url) {
    const quiet = await open(url, { noEcho: true });
    const other = await open(url);
    const sub = quiet.subscribe("echo.test");
    await quiet.flush();
    quiet.publish("echo.test", enc.encode("mine"));
    await quiet.flush();
    other.publish("echo.test", enc.encode("theirs"));
    await other.flush();
    const [m] = await collect(sub, 1, "echo off");
    equal(m.string(), "theirs", "only the other connection's message arrives");
    await Promise.all([quiet.close(), other.close()]);
  },

  async autounsub(url) {
    const nc = await open(url);
    const sub = nc.subscribe("auto.unsub", { max: 3 });
    await nc.flush();
    for (let i = 0; i < 10; i++) nc.publish("auto.unsub", enc.encode(String(i)));
    const got = [];
    for await (const m of sub) got.push(m.string()); // ends by itself after max messages
    equal(got, ["0", "1", "2"], "auto-unsubscribe after 3");
    check(sub.isClosed(), "subscription closed");
    // The server must have dropped interest too: a fresh subscriber sees later messages, the old one does not.
    const next = nc.subscribe("auto.unsub", { max: 1 });
    nc.publish("auto.unsub", enc.encode("later"));
    equal((await collect(next, 1, "later"))[0].string(), "later", "fresh subscriber");
    await nc.close();
  },

  async auth(url) {
    let refused;
    try {
      const bad = await open(url, { user: "alice", pass: "wrong", reconnect: false });
      await bad.close();
    } catch (err) {
      refused = err;
    }
    check(refused, "a wrong password must be refused");
    const isAuth = refused instanceof AuthorizationError || refused?.cause instanceof AuthorizationError ||
      /authorization violation/i.test(String(refused?.message));
    check(isAuth, `expected an authorization error, got ${refused?.name}: ${refused?.message}`);
    const nc = await open(url, { user: "alice", pass: "s3cret" });
    const sub = nc.subscribe("auth.ok", { max: 1 });
    nc.publish("auth.ok", enc.encode("in"));
    equal((await collect(sub, 1, "authenticated round trip"))[0].string(), "in", "payload");
    await nc.close();
  },

  async token(url) {
    await expectRefused(url, { token: "wrong" }, "a wrong token");
    await expectRefused(url, {}, "no token");
    const nc = await open(url, { token: "t0k3n" });
    await roundTrip(nc, "token.ok");
    await nc.close();
  },

  async nkey(url) {
    // The client signs the nonce from INFO with the seed; the server verifies the ed25519 signature.
    const nc = await open(url, { authenticator: nkeyAuthenticator(enc.encode(NKEY_SEED)) });
    check(nc.info?.nonce, "INFO carries a nonce");
    await roundTrip(nc, "nkey.ok");
    await nc.close();
    // Another (valid but unknown) user key is refused.
    const other = "SUAPPSG3ZXVYVYYXJAT5J7FJLRU4YDLF3L5F5RNCQW3YX7FQL6OPXKHY5M";
    await expectRefused(url, { authenticator: nkeyAuthenticator(enc.encode(other)) }, "an unknown nkey");
  },

  async permissions(url) {
    // "limited" may publish only to allowed.> and may not subscribe to secret.>; "admin" is unrestricted.
    const nc = await open(url, { user: "limited", pass: "pw" });
    const errors = [];
    const watcher = (async () => {
      for await (const s of nc.status()) {
        if (s.type === "error") errors.push(s.error);
      }
    })();

    const denied = nc.subscribe("secret.plans");
    const closedWith = await denied.closed;
    check(closedWith instanceof PermissionViolationError, `denied subscription closes with a permission error, got ${closedWith}`);
    equal([closedWith.operation, closedWith.subject], ["subscription", "secret.plans"], "subscription violation details");

    nc.publish("forbidden.topic", enc.encode("x"));
    await roundTrip(nc, "allowed.one");
    await nc.flush();
    const pubErr = errors.find((e) => e instanceof PermissionViolationError && e.operation === "publish");
    check(pubErr, `a publish violation is reported, got ${errors.map(String)}`);
    equal(pubErr.subject, "forbidden.topic", "publish violation subject");

    // A wildcard subscription wider than the deny is allowed but never receives the denied subjects.
    const wide = nc.subscribe(">");
    await nc.flush();
    const admin = await open(url, { user: "admin", pass: "pw" });
    const spy = admin.subscribe("secret.>");
    await admin.flush();
    nc.publish("allowed.two", enc.encode("2"));
    // Its own message is queued to it before the PONG, so it precedes the admin's later publishes.
    await nc.flush();
    admin.publish("secret.leak", enc.encode("s"));
    await admin.flush();
    equal((await collect(spy, 1, "admin sees secret"))[0].string(), "s", "admin payload");
    admin.publish("allowed.three", enc.encode("3"));
    const got = await collect(wide, 2, "wide subscription");
    equal(got.map((m) => m.subject), ["allowed.two", "allowed.three"], "limited user's deliveries");
    check(!nc.isClosed(), "violations do not close the connection");
    await Promise.all([nc.close(), admin.close()]);
    void watcher;
  },

  // Expects mappings orders.* -> shipping.$1, req.* -> svc.$1 and split -> left 50% / right 50%
  // (JsClient/JsClientTests.cs configures them).
  async mappings(url) {
    const nc = await open(url);
    const sub = nc.subscribe("shipping.*");
    const direct = nc.subscribe("orders.*");
    await nc.flush();
    for (const id of ["1", "2", "3", "done"]) nc.publish(`orders.${id}`, enc.encode(id));
    const got = await collect(sub, 4, "mapped orders");
    equal(got.map((m) => [m.subject, m.string()]),
      [["shipping.1", "1"], ["shipping.2", "2"], ["shipping.3", "3"], ["shipping.done", "done"]],
      "delivered on the mapped subject");
    equal(direct.getReceived(), 0, "nothing delivered on the source subject");

    // A request to a mapped subject: the responder sees the mapped subject, the reply comes back.
    const responder = await open(url);
    responder.subscribe("svc.*", {
      callback: (_err, m) => m.respond(enc.encode(`answer from ${m.subject}`)),
    });
    await responder.flush();
    const reply = await nc.request("req.time", enc.encode("?"), { timeout: 10_000 });
    equal(reply.string(), "answer from svc.time", "reply through a mapping");

    // 50/50 weighted destinations: every message lands on exactly one side, both sides get some.
    const left = nc.subscribe("left");
    const right = nc.subscribe("right");
    const end = nc.subscribe("shipping.end", { max: 1 });
    await nc.flush();
    for (let i = 0; i < 200; i++) nc.publish("split", enc.encode(String(i)));
    nc.publish("orders.end", enc.encode("end"));
    await nc.flush();
    await collect(end, 1, "sentinel after the weighted batch");
    const l = left.getReceived();
    const r = right.getReceived();
    equal(l + r, 200, "every weighted message delivered once");
    check(l > 0 && r > 0, `both destinations used (left ${l}, right ${r})`);
    await Promise.all([nc.close(), responder.close()]);
  },

  // Needs system_account SYS with user "sys"/"p" and account A with user "a"/"a" (JsClientTests.cs).
  async sysping(url) {
    const sys = await open(url, { user: "sys", pass: "p" });
    const info = sys.info;
    const ping = await sys.request("$SYS.REQ.SERVER.PING", undefined, { timeout: 10_000 });
    const statsz = ping.json();
    equal(statsz.server.id, info.server_id, "statsz server id");
    equal(statsz.server.ver, info.version, "statsz server version");
    check(statsz.statsz.connections >= 1, "statsz counts this connection");
    check(typeof statsz.server.seq === "number" && statsz.server.seq > 0, "server seq");

    const varz = (await sys.request(`$SYS.REQ.SERVER.${info.server_id}.VARZ`, undefined, { timeout: 10_000 })).json();
    equal(varz.data.server_id, info.server_id, "varz over $SYS");
    equal(varz.data.system_account, "SYS", "varz system account");
    const connz = (await sys.request("$SYS.REQ.SERVER.PING.CONNZ", enc.encode(JSON.stringify({ subscriptions: true })),
      { timeout: 10_000 })).json();
    check(connz.data.connections.some((c) => c.cid === info.client_id), "connz lists the requester");

    // Advisories: an account user connecting and leaving.
    const events = sys.subscribe("$SYS.ACCOUNT.A.*");
    await sys.flush();
    const a = await open(url, { user: "a", pass: "a", name: "js-member" });
    await a.close();
    const got = await collect(events, 2, "connect and disconnect advisories");
    equal(got.map((m) => m.subject), ["$SYS.ACCOUNT.A.CONNECT", "$SYS.ACCOUNT.A.DISCONNECT"], "advisory subjects");
    equal(got.map((m) => m.json().type), ["io.nats.server.advisory.v1.client_connect", "io.nats.server.advisory.v1.client_disconnect"], "advisory types");
    equal(got[0].json().client.name, "js-member", "client name in the advisory");
    equal(got[1].json().reason, "Client Closed", "disconnect reason");

    // An account user reaches the services Go imports into every account, about its own account only.
    const b = await open(url, { user: "a", pass: "a" });
    const own = (await b.request("$SYS.REQ.SERVER.PING.CONNZ", enc.encode(JSON.stringify({ acc: "SYS" })), { timeout: 10_000 })).json();
    equal(own.data.connections.map((c) => c.cid), [b.info.client_id], "account connz is clamped to the requester's account");
    const ownStatz = (await b.request("$SYS.REQ.ACCOUNT.PING.STATZ", undefined, { timeout: 10_000 })).json();
    equal(ownStatz.data.account_statz.map((a) => a.acc), ["A"], "account statz");

    // Other $SYS services live in the system account only: no responders.
    let noResponders;
    try {
      await b.request("$SYS.REQ.SERVER.PING.VARZ", undefined, { timeout: 5_000 });
    } catch (err) {
      noResponders = err;
    }
    check(noResponders instanceof NoRespondersError || noResponders?.cause instanceof NoRespondersError ||
      /no responders/i.test(String(noResponders?.message)), `account user must get no responders, got ${noResponders}`);
    await Promise.all([sys.close(), b.close()]);
  },

  async ordered(url) {
    const N = 10_000;
    const pub = await open(url);
    const subc = await open(url);
    const sub = subc.subscribe("stream.ordered");
    await subc.flush();
    const sent = createHash("sha256");
    for (let i = 0; i < N; i++) {
      const body = randomBytes(16 + (i % 200));
      const digest = createHash("sha256").update(body).digest();
      const msg = Buffer.concat([Buffer.from(`${i}:`), digest, body]);
      sent.update(msg);
      pub.publish("stream.ordered", msg);
    }
    await pub.flush();
    const got = createHash("sha256");
    let expect = 0;
    for await (const m of sub) {
      const data = Buffer.from(m.data);
      const colon = data.indexOf(0x3a);
      const seq = Number(dec.decode(data.subarray(0, colon)));
      equal(seq, expect, "sequence");
      const digest = data.subarray(colon + 1, colon + 33);
      const body = data.subarray(colon + 33);
      check(createHash("sha256").update(body).digest().equals(digest), `payload checksum of message ${seq}`);
      got.update(data);
      if (++expect === N) break;
    }
    equal(got.digest("hex"), sent.digest("hex"), "whole-stream checksum");
    await Promise.all([pub.close(), subc.close()]);
  },

  // Accounts A (user a/pa) and B (user b/pb): the same subject is two separate subject spaces.
  async accounts(url) {
    const a = await open(url, { user: "a", pass: "pa" });
    const b = await open(url, { user: "b", pass: "pb" });
    const subA = a.subscribe("acct.x");
    const subB = b.subscribe("acct.x");
    await Promise.all([a.flush(), b.flush()]);
    // B's message is fully processed (flush) before A publishes: had it leaked into A, it would be
    // the first message A's subscriber sees.
    b.publish("acct.x", enc.encode("from-b"));
    await b.flush();
    a.publish("acct.x", enc.encode("from-a"));
    await a.flush();
    equal((await collect(subA, 1, "account A"))[0].string(), "from-a", "A sees only its own account");
    a.publish("acct.x", enc.encode("from-a-2"));
    await a.flush();
    b.publish("acct.x", enc.encode("from-b-2"));
    equal((await collect(subB, 2, "account B")).map((m) => m.string()), ["from-b", "from-b-2"], "B sees only its own account");
    await Promise.all([a.close(), b.close()]);
  },

  // Driven scenario: prints READY once connected; the test then puts the server into lame duck
  // mode. Passes when nats.js reports the "ldm" status and the server later closes the connection.
  async ldm(url) {
    const nc = await open(url, { reconnect: false });
    const statuses = (async () => {
      for await (const s of nc.status()) {
        if (s.type === "ldm") return s;
      }
      return undefined;
    })();
    await roundTrip(nc, "js.ldm");
    console.log("READY");
    const s = await statuses;
    check(s?.type === "ldm", `expected an ldm status, got ${JSON.stringify(s)}`);
    const err = await nc.closed();
    check(nc.isClosed(), "connection closed by the server after the grace period");
    console.log(`ldm status from ${s.server}; closed${err ? ` (${err.message})` : ""}`);
  },

  // Needs the accounts block JsClientTests.cs gives the "imports" scenario: account A (user exporter)
  // exports service svc.>, streamed service ticks and stream feed.>; account B (user importer) imports
  // svc.> as remote.>, ticks as is, and feed.> with prefix "a".
  async imports(url) {
    const exporter = await open(url, { user: "exporter", pass: "pw" });
    const importer = await open(url, { user: "importer", pass: "pw" });

    const service = exporter.subscribe("svc.>");
    (async () => {
      for await (const m of service) {
        const info = JSON.parse(m.headers?.get("Nats-Request-Info") || "{}");
        m.respond(enc.encode(`${m.string().toUpperCase()} via ${m.subject} for ${info.acc}`));
      }
    })();
    const ticks = exporter.subscribe("ticks");
    (async () => {
      for await (const m of ticks) {
        for (const t of ["1", "2", "3"]) m.respond(enc.encode(t));
        m.respond(new Uint8Array(0));
      }
    })();
    await exporter.flush();

    const answer = await importer.request("remote.echo", enc.encode("hi"), { timeout: 5000 });
    equal(answer.string(), "HI via svc.echo for B", "service import answer");
    const second = await importer.request("remote.other", enc.encode("again"), { timeout: 5000 });
    equal(second.string(), "AGAIN via svc.other for B", "second request");

    // The exporter's own subject is not visible in the importing account.
    let refused;
    try {
      await importer.request("svc.echo", enc.encode("x"), { timeout: 5000 });
    } catch (err) {
      refused = err;
    }
    check(refused, "svc.echo in B must have no responders");

    const inbox = createInbox();
    const parts = importer.subscribe(inbox);
    importer.publish("ticks", enc.encode("go"), { reply: inbox });
    const streamed = await collect(parts, 4, "streamed responses");
    equal(streamed.map((m) => m.string()), ["1", "2", "3", ""], "streamed response parts");

    const feed = importer.subscribe("a.feed.>");
    await importer.flush();
    exporter.publish("feed.prices", enc.encode("42"));
    exporter.publish("other", enc.encode("not imported"));
    exporter.publish("feed.news", enc.encode("headline"));
    const got = await collect(feed, 2, "stream import");
    equal(got.map((m) => [m.subject, m.string()]), [["a.feed.prices", "42"], ["a.feed.news", "headline"]], "imported stream");

    await Promise.all([exporter.close(), importer.close()]);
  },

  // TLS: node scenarios.mjs <url> tls <ca.pem> [<cert.pem> <key.pem>] — the server requires TLS (and,
  // with a client certificate, may verify it); the client upgrades after INFO as nats.js always does.
  async tls(url) {
    const nc = await open(url, { tls: tlsOptions() });
    check(nc.info?.tls_required === true, "INFO says tls_required");
    const sub = nc.subscribe("tls.basic");
    const done = collect(sub, 2, "tls pubsub");
    nc.publish("tls.basic", enc.encode("one"));
    nc.publish("tls.basic", enc.encode("x".repeat(100_000)));
    const msgs = await done;
    equal(msgs.map((m) => m.data.length), [3, 100_000], "payload sizes over TLS");
    await roundTrip(nc, "tls.rr");
    await nc.close();
  },

  // verify_and_map: the certificate names a user who may publish only to allowed.> and may not subscribe to secret.>.
  async tlsmap(url) {
    const nc = await open(url, { tls: tlsOptions() });
    const denied = nc.subscribe("secret.plans");
    const closedWith = await denied.closed;
    check(closedWith instanceof PermissionViolationError, `denied subscription closes with a permission error, got ${closedWith}`);
    await roundTrip(nc, "allowed.one");
    await nc.close();
    let refused;
    try {
      const anonymous = await open(url, { tls: { caFile: process.argv[4] }, reconnect: false });
      await anonymous.close();
    } catch (err) {
      refused = err;
    }
    check(refused, "a client without a certificate is refused");
  },

  // WebSocket: node scenarios.mjs ws://host:port ws — nats.js's wsconnect (the transport browsers use),
  // here on node's "ws" package since node 20 has no global WebSocket.
  async ws(url) {
    globalThis.WebSocket ??= (await import("ws")).WebSocket;
    const nc = await wsconnect({ servers: url, timeout: 10_000 });
    const sub = nc.subscribe("ws.basic");
    const done = collect(sub, 3, "ws pubsub");
    nc.publish("ws.basic", enc.encode("one"));
    nc.publish("ws.basic", enc.encode("y".repeat(200_000)));
    const h = headers();
    h.set("X-Test", "ws");
    nc.publish("ws.basic", enc.encode("three"), { headers: h });
    const msgs = await done;
    equal(msgs.map((m) => m.data.length), [3, 200_000, 5], "payload sizes over WebSocket");
    equal(msgs[2].headers?.get("X-Test"), "ws", "header over WebSocket");
    const svc = nc.subscribe("ws.echo", { callback: (_, m) => m.respond(m.data) });
    const reply = await nc.request("ws.echo", enc.encode("ping"), { timeout: 5_000 });
    equal(reply.string(), "ping", "request/reply over WebSocket");
    svc.unsubscribe();
    await nc.close();
  },
};

async function main() {
  const [url, name] = process.argv.slice(2);
  if (url === "--list") {
    console.log(Object.keys(scenarios).join("\n"));
    return;
  }
  const run = scenarios[name];
  if (!url || !run) {
    throw new Error(`usage: node scenarios.mjs <nats-url> <${Object.keys(scenarios).join("|")}>`);
  }
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario '${name}' timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  await Promise.race([run(url), timeout]);
  clearTimeout(timer);
  console.log(`scenario '${name}' passed against ${url}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`FAILED: ${err?.stack ?? err}`);
    process.exit(1);
  }
);
