// Shell-style globs for --include and --exclude: "*" any run without "/", "**" any run across
// folders, "?" one character, "[abc]" and "{html,htm}". A pattern without "/" is matched against
// the file's name, one with "/" against its path relative to the folder walked.
import { InvalidArgumentError } from "../errors.js";

/** A predicate for a glob pattern. */
export function globMatcher(option: string, pattern: string): (relativePath: string) => boolean {
  if (pattern === "") throw new InvalidArgumentError(option, pattern, "a glob such as *.html or docs/**/*.txt");
  const regex = new RegExp(`^${translate(option, pattern)}$`);
  const byName = !pattern.includes("/");
  return (path) => regex.test(byName ? path.slice(path.lastIndexOf("/") + 1) : path);
}

function translate(option: string, pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        i++;
        if (pattern[i + 1] === "/") {
          i++;
          out += "(?:.*/)?"; // "**/" also matches no folder at all
        } else out += ".*";
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) throw new InvalidArgumentError(option, pattern, "a glob whose [ has a closing ]");
      const body = pattern.slice(i + 1, end).replace(/\\/g, "\\\\");
      out += `[${body[0] === "!" ? "^" + body.slice(1) : body}]`;
      i = end;
    } else if (c === "{") {
      const end = pattern.indexOf("}", i);
      if (end < 0) throw new InvalidArgumentError(option, pattern, "a glob whose { has a closing }");
      out += `(?:${pattern
        .slice(i + 1, end)
        .split(",")
        .map((part) => translate(option, part))
        .join("|")})`;
      i = end;
    } else out += c.replace(/[.+^$()|\\]/g, "\\$&");
  }
  return out;
}
