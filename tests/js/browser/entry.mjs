// The browser build of nats.js v3: nats-core (whose wsconnect is the browsers' transport) bundled as one
// ES module by esbuild, the way a web application ships it. Built by the browser test; not committed.
export { wsconnect, headers } from "@nats-io/nats-core";
