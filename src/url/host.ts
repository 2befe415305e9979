// Splitting a netloc as urllib.parse does; hosts go to ASCII in idna.ts.

/** Splits a netloc into userinfo (with its "@"), host and port part (with its ":"). */
export function splitNetloc(netloc: string): { userinfo: string; host: string; port: string } {
  const at = netloc.lastIndexOf("@");
  const userinfo = at === -1 ? "" : netloc.slice(0, at + 1);
  const hostport = netloc.slice(at + 1);
  if (hostport.startsWith("[")) {
    const close = hostport.indexOf("]");
    if (close !== -1) return { userinfo, host: hostport.slice(0, close + 1), port: hostport.slice(close + 1) };
  }
  const colon = hostport.lastIndexOf(":");
  if (colon === -1) return { userinfo, host: hostport, port: "" };
  return { userinfo, host: hostport.slice(0, colon), port: hostport.slice(colon) };
}
