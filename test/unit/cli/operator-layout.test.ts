import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { operatorLayout, type OperatorLayout } from "../../../src/cli/operator-layout.js";
import {
  isMainPackageSource,
  isManifestName,
  LAYOUT_DIRS,
  MAIN_FILES,
  type DirectoryRead,
  type FileRead,
  type PackageRead,
  type RepositoryRead,
} from "../../../src/cli/repository-read.js";
import { UsageError } from "../../../src/errors.js";
import { exampleCrd } from "../../support/crd-fixture.js";

const DIR = "/repo";
const CWD = "/repo";

/** A file a read failed on: the error kept in its place, as init's reader keeps it. */
const unreadable = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
type Tree = Readonly<Record<string, string | Error>>;

const read = (content: string | Error): FileRead =>
  typeof content === "string" ? { text: content } : { error: content };

/** The directory listing of `relativeDir` in `tree` (direct children that are manifests). */
function listing(tree: Tree, relativeDir: string): DirectoryRead {
  const files = Object.entries(tree)
    .filter(([name]) => dirname(name) === relativeDir && isManifestName(name.split("/").at(-1) ?? ""))
    .map(([name, content]) => ({ path: join(DIR, name), read: read(content) }));
  return { files };
}

/** What init-command's reader gathers from a repository whose files are `tree` (paths relative to DIR). */
function repository(tree: Tree, flags: Partial<RepositoryRead> = {}): RepositoryRead {
  const names = Object.keys(tree);
  const directories = new Map<string, DirectoryRead>();
  for (const candidate of LAYOUT_DIRS) {
    if (names.some((n) => n.startsWith(`${candidate}/`)))
      directories.set(candidate, listing(tree, candidate));
  }
  const mains = new Map<string, PackageRead>();
  for (const candidate of MAIN_FILES) {
    if (!(candidate in tree)) continue;
    const files = Object.entries(tree)
      .filter(([name]) => dirname(name) === dirname(candidate) && isMainPackageSource(name))
      .map(([name, content]) => ({ name: name.split("/").at(-1) ?? "", read: read(content) }));
    mains.set(candidate, { files });
  }
  return { dir: DIR, cwd: CWD, directories, mains, ...flags };
}

const WIDGET_SCHEMA = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: { size: { type: "integer", minimum: 1, maximum: 3 }, mode: { type: "string" } },
    },
    status: { type: "object", properties: { conditions: { type: "array" } } },
  },
};
const WIDGET_CRD = stringify(
  exampleCrd({ plural: "widgets", singular: "widget", kind: "Widget" }, WIDGET_SCHEMA),
);
const GIZMO_CRD = stringify(
  exampleCrd({ plural: "gizmos", singular: "gizmo", kind: "Gizmo" }, { type: "object" }),
);
const sample = (kind: string, name: string, spec: unknown = { size: 1 }, apiVersion = "example.com/v1") =>
  stringify({ apiVersion, kind, metadata: { name }, spec });

const CONTROLLER_RUNTIME_MAIN = (extra = "") => `package main
import ctrl "sigs.k8s.io/controller-runtime"
func main() {
	flag.StringVar(&m, "metrics-bind-address", "0", "")
	flag.StringVar(&p, "health-probe-bind-address", ":8081", "")
	flag.BoolVar(&e, "leader-elect", false, "")
	flag.StringVar(&l, "leader-election-namespace", "", "")
${extra}
	_ = ctrl.GetConfigOrDie()
}
`;
const GO_RUN_FLAGS = ["--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"];

/** The kubebuilder layout: CRDs in config/crd/bases, samples in config/samples, cmd/main.go. */
const KUBEBUILDER: Tree = {
  "config/crd/bases/example.com_widgets.yaml": WIDGET_CRD,
  "config/crd/bases/kustomization.yaml": "resources: []\n",
  "config/samples/a_gizmo_of_another_group.yaml": sample("Gizmo", "g", {}, "other.com/v1"),
  "config/samples/v1_widget.yaml": sample("Widget", "w"),
  "config/samples/kustomization.yaml": sample("Widget", "not-a-sample"),
  "cmd/main.go": CONTROLLER_RUNTIME_MAIN('\tflag.StringVar(&ns, "watch-namespace", "", "")'),
};

type Facts = Partial<{
  crds: [origin: string, files: string[], skipped: [file: string, sameAs: string][]];
  sample: [file: string, kind: string, name: string];
  others: string[];
  command: [words: readonly string[], origin: string, goRun: boolean];
  namespaced: OperatorLayout["namespaced"];
  main: [name: string, target: string] | undefined;
  updates: OperatorLayout["updates"];
  readiness: OperatorLayout["readiness"];
}>;

/** The facts of `layout` that `expected` names, in its shape. */
function factsOf(layout: OperatorLayout, expected: Facts): Facts {
  const all: Record<keyof Facts, unknown> = {
    crds: [layout.crds.origin, [...layout.crds.files], layout.crds.skipped.map((s) => [s.file, s.sameAs])],
    sample: [layout.sample.file, layout.sample.kind, layout.sample.name],
    others: layout.others.map((o) => o.file),
    command: [layout.command.words, layout.command.origin, layout.command.goRun],
    namespaced: layout.namespaced,
    main: layout.main && [layout.main.name, layout.main.target],
    updates: layout.updates,
    readiness: layout.readiness,
  };
  return Object.fromEntries(Object.keys(expected).map((key) => [key, Reflect.get(all, key)]));
}

describe("operatorLayout", () => {
  const cases: [string, RepositoryRead, Facts][] = [
    [
      "kubebuilder: the CRDs, a sample of a served kind, go run of cmd/main.go with its side-by-side flags",
      repository(KUBEBUILDER),
      {
        crds: ["found in config/crd/bases", ["/repo/config/crd/bases/example.com_widgets.yaml"], []],
        sample: ["/repo/config/samples/v1_widget.yaml", "Widget", "w"],
        // The Gizmo's group is served by no CRD; the kustomization is no sample.
        others: ["/repo/config/samples/a_gizmo_of_another_group.yaml"],
        command: [["go", "run", "./cmd/main.go", ...GO_RUN_FLAGS], "go run of ./cmd/main.go", true],
        namespaced: { arg: "--watch-namespace", why: "cmd/main.go defines the flag --watch-namespace" },
        main: ["cmd/main.go", "./cmd/main.go"],
        updates: [
          { field: "size", from: 1, to: 2 },
          { field: "size", from: 2, to: 3 },
        ],
        readiness: "conditions",
      },
    ],
    [
      "a second file defining the same CRD is left out",
      repository({ ...KUBEBUILDER, "config/crd/bases/example.com_widgets_v2.yaml": WIDGET_CRD }),
      {
        crds: [
          "found in config/crd/bases",
          ["/repo/config/crd/bases/example.com_widgets.yaml"],
          [
            [
              "/repo/config/crd/bases/example.com_widgets_v2.yaml",
              "/repo/config/crd/bases/example.com_widgets.yaml",
            ],
          ],
        ],
      },
    ],
    [
      "the first layout directory that holds a CRD wins; a multi-document file counts once",
      repository({
        "config/crd/bases/README.yaml": "kind: ConfigMap\n",
        "deploy/crds/all.yml": `${WIDGET_CRD}---\n${GIZMO_CRD}`,
        "deploy/crds/widget_cr.yaml": sample("Widget", "from-deploy"),
        "crds/other.yaml": GIZMO_CRD,
      }),
      {
        crds: ["found in deploy/crds", ["/repo/deploy/crds/all.yml"], []],
        sample: ["/repo/deploy/crds/widget_cr.yaml", "Widget", "from-deploy"],
      },
    ],
    [
      "a main package of several files: go run of its directory; the first namespace flag by rank",
      repository({
        ...KUBEBUILDER,
        "cmd/main.go": CONTROLLER_RUNTIME_MAIN(
          '\tflag.StringVar(&a, "namespace", "", "")\n\tpflag.StringSliceVarP(&b, "watch-namespaces", "w", nil, "")',
        ),
        "cmd/flags.go": "package main\n",
        "cmd/main_test.go": "package main // WATCH_NAMESPACE\n",
      }),
      {
        command: [["go", "run", "./cmd", ...GO_RUN_FLAGS], "go run of ./cmd", true],
        namespaced: { arg: "--watch-namespaces", why: "cmd/main.go defines the flag --watch-namespaces" },
        main: ["cmd/main.go", "./cmd"],
      },
    ],
    [
      "main.go at the root, with others: go run .; WATCH_NAMESPACE when there is no namespace flag",
      repository({
        "crds/widget.yaml": WIDGET_CRD,
        "samples/widget.yaml": sample("Widget", "w"),
        "main.go": CONTROLLER_RUNTIME_MAIN('\t_ = os.Getenv("WATCH_NAMESPACE")'),
        "util.go": "package main\n",
      }),
      {
        command: [["go", "run", ".", ...GO_RUN_FLAGS], "go run of .", true],
        namespaced: { env: "WATCH_NAMESPACE", why: "main.go reads WATCH_NAMESPACE" },
      },
    ],
    [
      "cmd/main.go is preferred to main.go",
      repository({ ...KUBEBUILDER, "main.go": "package main\n" }),
      { main: ["cmd/main.go", "./cmd/main.go"] },
    ],
    [
      "a client-go program with its own --kubeconfig flag gets KUBECONFIG through a shell",
      repository({
        ...KUBEBUILDER,
        "cmd/main.go":
          'package main\nimport "k8s.io/client-go/tools/clientcmd"\nvar k = flag.String("kubeconfig", "", "")\n',
      }),
      {
        command: [
          ["sh", "-c", 'exec go run ./cmd/main.go --kubeconfig="$KUBECONFIG" "$@"', "operator"],
          "go run of ./cmd/main.go, with --kubeconfig",
          true,
        ],
        namespaced: { none: "cmd/main.go defines no namespace flag and does not read WATCH_NAMESPACE" },
      },
    ],
    [
      "no main.go: the placeholder command, and no namespace",
      repository({ "crds/widget.yaml": WIDGET_CRD, "samples/widget.yaml": sample("Widget", "w") }),
      {
        command: [["./bin/manager", "--leader-elect=false"], "placeholder: no main.go found", false],
        namespaced: {
          none: "no main.go found to look for a namespace flag (looked for cmd/main.go, main.go, cmd/manager/main.go)",
        },
        main: undefined,
      },
    ],
    [
      "--command as a shell line; go run in it is slow to start",
      repository(KUBEBUILDER, { command: `go run ./cmd --greeting 'hello there'` }),
      { command: [["go", "run", "./cmd", "--greeting", "hello there"], "given with --command", true] },
    ],
    [
      "--command as JSON",
      repository(KUBEBUILDER, { command: '["./op", "a b"]' }),
      { command: [["./op", "a b"], "given with --command", false] },
    ],
    [
      "--crds (a directory) and --sample override the layout",
      repository(
        { ...KUBEBUILDER, "elsewhere/crds.yaml": GIZMO_CRD },
        {
          crds: {
            flag: "elsewhere",
            path: "/repo/elsewhere",
            read: { directory: listing({ "elsewhere/crds.yaml": GIZMO_CRD }, "elsewhere") },
          },
          sample: { flag: "g.yaml", path: "/repo/g.yaml", read: { text: sample("Gizmo", "g", { size: 1 }) } },
        },
      ),
      {
        crds: ["--crds", ["/repo/elsewhere/crds.yaml"], []],
        sample: ["/repo/g.yaml", "Gizmo", "g"],
        others: [],
        // The Gizmo's schema types nothing: no update, and nothing against conditions.
        updates: [],
        readiness: "conditions",
      },
    ],
    [
      "--crds (one file)",
      repository(KUBEBUILDER, {
        crds: { flag: "w.yaml", path: "/elsewhere/w.yaml", read: { file: { text: WIDGET_CRD } } },
      }),
      { crds: ["--crds", ["/elsewhere/w.yaml"], []] },
    ],
    [
      "an integer at its maximum goes down",
      repository({ ...KUBEBUILDER, "config/samples/v1_widget.yaml": sample("Widget", "w", { size: 3 }) }),
      {
        updates: [
          { field: "size", from: 3, to: 2 },
          { field: "size", from: 2, to: 1 },
        ],
      },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    expect(factsOf(operatorLayout(input), expected)).toEqual(expected);
  });

  const failures: [string, RepositoryRead, code: string, message: string | RegExp][] = [
    [
      "no CRD in the layout",
      repository({ "config/crd/bases/x.yaml": "kind: ConfigMap\n", "cmd/main.go": "package main\n" }),
      "init/no-crds",
      "init: no CustomResourceDefinition found in /repo: looked in config/crd/bases, deploy/crds, crds (kubebuilder writes them to config/crd/bases with `make manifests`); give the directory that holds them with --crds DIR",
    ],
    [
      "--crds that cannot be read",
      repository(KUBEBUILDER, {
        crds: { flag: "nope", path: "/repo/nope", read: { error: unreadable("ENOENT") } },
      }),
      "init/no-crds",
      "init: --crds nope: cannot read /repo/nope: no such file or directory (ENOENT)",
    ],
    [
      "--crds, a directory without CRDs",
      repository(KUBEBUILDER, { crds: { flag: "d", path: "/repo/d", read: { directory: { files: [] } } } }),
      "init/no-crds",
      "init: --crds d: no CustomResourceDefinition in any .yaml file in /repo/d",
    ],
    [
      "--crds, a file without CRDs",
      repository(KUBEBUILDER, {
        crds: { flag: "f", path: "/repo/f", read: { file: { text: "kind: X\n" } } },
      }),
      "init/no-crds",
      "init: --crds f: no CustomResourceDefinition in /repo/f",
    ],
    [
      "a layout file that cannot be read, named as the user sees it",
      repository({ ...KUBEBUILDER, "config/crd/bases/locked.yaml": unreadable("EACCES") }),
      "init/unreadable",
      "init: config/crd/bases/locked.yaml: cannot read /repo/config/crd/bases/locked.yaml: permission denied (EACCES)",
    ],
    [
      "YAML that does not parse: the file and the line",
      repository({ ...KUBEBUILDER, "config/crd/bases/broken.yaml": "apiVersion: v1\nkind: [\n  a: b: c\n" }),
      "init/invalid-yaml",
      /^init: \/repo\/config\/crd\/bases\/broken\.yaml:3:\d+: not valid YAML: /,
    ],
    [
      "no sample of a served kind: what was found instead",
      repository({
        ...KUBEBUILDER,
        "config/samples/v1_widget.yaml": sample("Widget", "w", {}, "example.com/v2"),
      }),
      "init/no-sample",
      "init: no sample of a kind the CRDs serve (Widget (example.com/v1)) in /repo: looked in config/samples, deploy/crds, samples; found only config/samples (a_gizmo_of_another_group.yaml: Gizmo other.com/v1, v1_widget.yaml: Widget example.com/v2); give one with --sample FILE",
    ],
    [
      "--sample that cannot be read",
      repository(KUBEBUILDER, {
        sample: { flag: "s.yaml", path: "/repo/s.yaml", read: { error: unreadable("ENOENT") } },
      }),
      "init/unreadable",
      "init: --sample s.yaml: cannot read /repo/s.yaml: no such file or directory (ENOENT)",
    ],
    [
      "--sample of two objects",
      repository(KUBEBUILDER, {
        sample: { flag: "s.yaml", path: "/repo/s.yaml", read: { text: "a: 1\n---\nb: 2\n" } },
      }),
      "init/bad-sample",
      "init: --sample s.yaml: expected exactly one object in /repo/s.yaml, found 2",
    ],
    [
      "--sample without metadata.name",
      repository(KUBEBUILDER, {
        sample: { flag: "s.yaml", path: "/repo/s.yaml", read: { text: "apiVersion: v1\nkind: X\n" } },
      }),
      "init/bad-sample",
      "init: --sample s.yaml: the object in /repo/s.yaml needs apiVersion, kind and metadata.name",
    ],
    [
      "--sample of a kind no CRD serves",
      repository(KUBEBUILDER, {
        sample: { flag: "s.yaml", path: "/repo/s.yaml", read: { text: sample("Gizmo", "g") } },
      }),
      "init/sample-not-served",
      "init: --sample s.yaml: no CRD serves its kind Gizmo in example.com/v1; the CRDs serve Widget (example.com/v1)",
    ],
    [
      "a --command that cannot be split",
      repository(KUBEBUILDER, { command: "./op 'unclosed" }),
      "init/bad-command",
      `init: --command "./op 'unclosed": unclosed '`,
    ],
    [
      // Discovery goes CRDs, sample, then the command: the first problem is the one reported.
      "no CRD and a bad --command: the CRDs are reported",
      repository({}, { command: "'" }),
      "init/no-crds",
      /^init: no CustomResourceDefinition found in \/repo/,
    ],
  ];
  it.each(failures)("refuses %s", (_name, input, code, message) => {
    let error: unknown;
    try {
      operatorLayout(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    if (!(error instanceof UsageError)) return;
    expect(error.code).toBe(code);
    if (typeof message === "string") expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });

  it("raises a directory's or a main package's read error as it was", () => {
    const listingError = unreadable("EACCES");
    const broken = repository(KUBEBUILDER);
    const directories = new Map(broken.directories).set("config/crd/bases", { error: listingError });
    expect(() => operatorLayout({ ...broken, directories })).toThrow(listingError);
    const packageError = unreadable("EIO");
    const mains = new Map<string, PackageRead>([
      ["cmd/main.go", { files: [{ name: "main.go", read: { error: packageError } }] }],
    ]);
    expect(() => operatorLayout({ ...broken, mains })).toThrow(packageError);
  });

  it.each([
    ["widget.yaml", true],
    ["widget.yml", true],
    ["kustomization.yaml", false],
    ["kustomization.yml", false],
    ["README.md", false],
  ])("takes %s for a manifest: %s", (name, expected) => {
    expect(isManifestName(name)).toBe(expected);
  });
});
