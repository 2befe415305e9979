// The example worker with a clock the test sets (POST /clock?t=MS): the Durable Object class reads
// it through its now() (one isolate holds the worker and its objects in local workerd), so the
// window test moves time by hand instead of waiting on the wall clock.
import worker from "../../examples/durable-object/worker.js";
import { SeenSetDurableObject as Base } from "crawlsieve/durable-object";

let now = 0;

export class SeenSetDurableObject extends Base {
  now() {
    return now;
  }
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/clock") return worker.fetch(request, env, ctx);
    now = Number(url.searchParams.get("t"));
    return Response.json(true);
  },
};
