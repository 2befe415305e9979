# workerd configuration of the edge example (run from the build output folder):
#   npx workerd serve config.capnp   # http://127.0.0.1:8787/check?url=...
#   npx workerd test config.capnp    # runs the worker's test() handler
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .dedupWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const dedupWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "crawlsieve.wasm", wasm = embed "crawlsieve.wasm"),
    (name = "filter.bin", data = embed "filter.bin"),
  ],
  compatibilityDate = "2024-09-23",
);
