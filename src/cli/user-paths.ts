import { isAbsolute, relative, sep } from "node:path";

// Paths as init writes them into files and messages; pure (the working directory is given).

/** A path with `/` separators, as a contract file and `go run` write it on every platform. */
export function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

/** A path as the user sees it: relative to the working directory `cwd` when under it, else as given. */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : toPosix(rel);
}
