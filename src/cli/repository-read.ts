import { extname } from "node:path";

// What init reads of an operator's repository, as plain data (gathered by init-command.ts, decided
// on by operator-layout.ts and main-package.ts): where it looks, and what each read gave. A read
// that failed is data too.

/** Where the kubebuilder layout (first), operator-sdk's older one and plain projects keep CRDs. */
export const CRD_DIRS = ["config/crd/bases", "deploy/crds", "crds"] as const;
/** Where the same layouts keep samples of the custom resources. */
export const SAMPLE_DIRS = ["config/samples", "deploy/crds", "samples"] as const;
/** Where the controllers' packages are in the layouts init knows (kubebuilder's, operator-sdk's older one). */
export const CONTROLLER_DIRS = [
  "internal/controller",
  "controllers",
  "pkg/controller",
  "internal/controllers",
] as const;

/** Where the main package's main.go is, first match wins. */
export const MAIN_FILES = ["cmd/main.go", "main.go", "cmd/manager/main.go"] as const;

/** Where kubebuilder keeps the webhook configurations controller-gen writes (manifests.yaml). */
export const WEBHOOK_DIRS = ["config/webhook"] as const;

/** Every layout directory discovery may look in (CRD_DIRS, SAMPLE_DIRS and WEBHOOK_DIRS), each once. */
export const LAYOUT_DIRS: readonly string[] = [
  ...new Set<string>([...CRD_DIRS, ...SAMPLE_DIRS, ...WEBHOOK_DIRS]),
];

/** A file that may hold manifests: .yaml or .yml, but not a kustomization. */
export function isManifestName(name: string): boolean {
  return [".yaml", ".yml"].includes(extname(name)) && !/^kustomization\.ya?ml$/.test(name);
}

/** A Go source of the main package itself (not its tests). */
export function isMainPackageSource(name: string): boolean {
  return name.endsWith(".go") && !name.endsWith("_test.go");
}

// ---------------------------------------------------------------- what was read

/** What reading one file gave: its text, or the error the read failed with. */
export type FileRead = { readonly text: string } | { readonly error: unknown };

/** A directory's manifest files (isManifestName), each with what reading it gave; or why listing it failed. */
export type DirectoryRead =
  | { readonly files: readonly { readonly path: string; readonly read: FileRead }[] }
  | { readonly error: unknown };

/** A main package's directory: its sources (isMainPackageSource) with their reads; or why listing it failed. */
export type PackageRead =
  | { readonly files: readonly { readonly name: string; readonly read: FileRead }[] }
  | { readonly error: unknown };

/** What init read of a repository, and the flags that steer discovery. Paths are absolute. */
export interface RepositoryRead {
  /** The project directory (--dir). */
  readonly dir: string;
  /** The working directory, for naming files in messages as the user sees them. */
  readonly cwd: string;
  /** Each of LAYOUT_DIRS (relative to dir) that is a directory, listed; the others are absent. */
  readonly directories: ReadonlyMap<string, DirectoryRead>;
  /** Each of MAIN_FILES (relative to dir) that exists, with its directory's package; the others are absent. */
  readonly mains: ReadonlyMap<string, PackageRead>;
  /** Each of CONTROLLER_DIRS (relative to dir) that is a directory, with its package's sources. */
  readonly controllers?: ReadonlyMap<string, PackageRead>;
  /** --crds: what stat found at its path, and what was read there. */
  readonly crds?: {
    readonly flag: string;
    readonly path: string;
    readonly read:
      { readonly error: unknown } | { readonly directory: DirectoryRead } | { readonly file: FileRead };
  };
  /** --sample, and what reading it gave. */
  readonly sample?: { readonly flag: string; readonly path: string; readonly read: FileRead };
  /** --command, as given. */
  readonly command?: string;
}
