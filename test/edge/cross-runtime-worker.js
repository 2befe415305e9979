// Runs in workerd: the cross-runtime computation with crawlsieve's workerd entry, compared with
// what Node computed (both inlined as JSON by the bundler). A mismatch throws, failing `workerd test`.
import * as cs from "crawlsieve";
import { compute } from "../browser/compute.js";
import fixture from "./fixture.json";
import expected from "./expected.json";

cs.initSync();

export default {
  async test() {
    const got = compute(cs, fixture);
    const wrong = Object.keys(expected).filter((key) => JSON.stringify(got[key]) !== JSON.stringify(expected[key]));
    if (wrong.length > 0) throw new Error(`workerd differs from Node on: ${wrong.join(", ")}`);
    console.log(`workerd agrees with Node on: ${Object.keys(expected).join(", ")}`);
  },
};
