/**
 * The seeded mistakes. The empty name is the correct operator; each other
 * name makes exactly one mistake that hand-written operators make. The
 * README's table and kill-matrix.yaml list the checks that must fail on each.
 */
export const BUGS = {
  /**
   * Compares the whole desired Deployment spec with the live one as JSON text
   * (the live one carries the server's defaults, and its keys come in another
   * order) and replaces the spec whenever the texts differ: every reconcile.
   */
  "deep-equal-update": "replaces the Deployment's spec whenever JSON.stringify of live and desired differ",
  /**
   * Creates the Service on every reconcile and takes 409 AlreadyExists for
   * "it is there, so it is right", without reading what is there.
   */
  "ignore-already-exists": "creates the Service every reconcile and takes AlreadyExists for success",
} as const;

export type Bug = keyof typeof BUGS | "";

export const ALL_BUGS = Object.keys(BUGS) as (keyof typeof BUGS)[];

/** A --bug / WEBAPP_BUG value: "" or "none" for the reference, else a name in BUGS. */
export function parseBug(value: string): Bug {
  if (value === "" || value === "none") return "";
  const bug = ALL_BUGS.find((name) => name === value);
  if (bug === undefined) {
    throw new Error(`unknown bug ${JSON.stringify(value)}: use one of ${ALL_BUGS.join(", ")}`);
  }
  return bug;
}
