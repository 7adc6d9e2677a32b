import { parseAllDocuments } from "yaml";
import { WEBHOOK_CONFIGURATION_KINDS } from "../contract/operator-webhooks.js";
import type { MainPackage } from "./main-package.js";
import { WEBHOOK_DIRS, type RepositoryRead } from "./repository-read.js";

// What init finds of the operator's admission webhooks: kubebuilder's config/webhook/manifests.yaml
// (controller-gen's output) and the flags of main.go that say where its webhook server listens and
// reads its certificate. Pure: decided from what was read.

/** A flag init found and why it took it. */
export interface FoundFlag {
  readonly arg: string;
  readonly why: string;
}

export interface WebhooksFound {
  /** The files holding Mutating- or ValidatingWebhookConfigurations, absolute. */
  readonly files: readonly string[];
  /** The webhooks they hold, for the starter's note: "mwebapp.kb.io (mutating)". */
  readonly webhooks: readonly string[];
  /** A flag that sets the webhook server's port, so scenarios can run side by side. */
  readonly portArg?: FoundFlag;
  /** A flag that names the certificate directory (kubebuilder's --webhook-cert-path). */
  readonly certDirArg?: FoundFlag;
}

/** The webhook configurations of the layout, or undefined when it has none. */
export function findWebhooks(
  read: Pick<RepositoryRead, "directories">,
  main: MainPackage | undefined,
): WebhooksFound | undefined {
  const files: string[] = [];
  const webhooks: string[] = [];
  for (const candidate of WEBHOOK_DIRS) {
    const listed = read.directories.get(candidate);
    if (!listed || "error" in listed) continue;
    for (const { path, read: file } of listed.files) {
      if ("error" in file) continue;
      const found = configurationWebhooks(file.text);
      if (found.length === 0) continue;
      files.push(path);
      webhooks.push(...found);
    }
  }
  if (files.length === 0) return undefined;
  const portArg = flagNamed(main, /^(?:[\w-]*-)?webhook-(?:[\w-]*-)?port$/);
  const certDirArg = flagNamed(main, /^(?:[\w-]*-)?webhook-cert-(?:path|dir)$/);
  return { files, webhooks, ...(portArg ? { portArg } : {}), ...(certDirArg ? { certDirArg } : {}) };
}

/** "name (mutating)" for each webhook of each configuration in a manifest; [] when it holds none (or is not YAML). */
function configurationWebhooks(text: string): string[] {
  const names: string[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) return [];
    const value = document.toJS() as { kind?: unknown; webhooks?: unknown } | null;
    if (!value || !WEBHOOK_CONFIGURATION_KINDS.includes(value.kind as never)) continue;
    const kind = value.kind === "MutatingWebhookConfiguration" ? "mutating" : "validating";
    for (const webhook of Array.isArray(value.webhooks) ? (value.webhooks as { name?: unknown }[]) : []) {
      names.push(`${typeof webhook.name === "string" ? webhook.name : "?"} (${kind})`);
    }
  }
  return names;
}

/**
 * A flag main.go defines (flag.StringVar(&x, "name", ...), flag.Int, pflag
 * alike; of `types`, default String, Int and Uint) whose name matches.
 */
export function flagNamed(
  main: MainPackage | undefined,
  pattern: RegExp,
  types = "String|Int|Uint",
): FoundFlag | undefined {
  if (!main) return undefined;
  const definitions = new RegExp(
    `\\b(?:${types})(?:Var)?P?\\s*\\(\\s*(?:&[\\w.[\\]]+\\s*,\\s*)?"([\\w-]+)"`,
    "g",
  );
  for (const match of main.text.matchAll(definitions)) {
    const name = match[1] ?? "";
    if (pattern.test(name)) return { arg: `--${name}`, why: `${main.name} defines the flag --${name}` };
  }
  return undefined;
}
