import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { handOverCluster } from "../cleanup/ownership.js";
import { createProvider, type ClusterConfig } from "../cluster/index.js";
import { prepareDeployedOperators } from "../operator/deployed/deployed-operator.js";
import { loadImageIntoKind } from "../operator/deployed/kind-image.js";
import { processLauncher } from "../operator/process-launcher.js";
import type { Contract } from "../contract/load-contract.js";
import { describeError, UsageError } from "../errors.js";
import { isAlreadyExists } from "../kube/api-errors.js";
import { KubeClient, type KubeObject } from "../kube/kube-client.js";
import type { CommandRunner } from "../process/command-runner.js";
import type { CheckReport, ExplorationReport, RunReport } from "../report/report-model.js";
import { dayOf, runStatus, waiverOutcomes } from "../report/waivers.js";
import type { CheckDefinition } from "../suites/check.js";
import { KNOWN_CHECKS, SUITES } from "../suites/index.js";
import type { ScenarioDeps } from "../scenario/scenario.js";
import type { Timings } from "../scenario/timings.js";
import { CLI_SETTINGS, type SettingNames } from "./setting-names.js";
import { WHOLE_RUN, type Shard } from "./shard.js";
import { createFixtures, deleteFixtures, resolveFixtures } from "../scenario/fixtures.js";
import { SpecReferences } from "../scenario/spec-references.js";
import { explorationWanted, exploreForRun, withNoEffect, type ExplorationFlags } from "./run-exploration.js";
import { referencesNeeded, runSuite, type ScenarioResult } from "./suite-runner.js";
import { SuiteProgress } from "./suite-progress.js";
import { judgeCheck } from "./check-judgement.js";
import { isoNow, type Clock } from "../util/clock.js";
import { pathFrom } from "../util/files.js";
import type { Logger } from "../util/logger.js";
import { Limiter } from "../util/limiter.js";
import { pollUntil } from "../util/poll.js";
import { oneAtATimeReason, scenarioParallelism } from "./parallelism.js";
import { crdsForServing, prepareWebhookServing, type WebhookServing } from "../webhooks/webhook-serving.js";

/** What to run: the contract, the cluster, and the run's options. */
export interface RunConfig {
  readonly contract: Contract;
  readonly cluster: ClusterConfig;
  /** Only these suites (default: the contract's). */
  readonly suites?: readonly string[];
  /** Only these checks, by id. */
  readonly checks?: readonly string[];
  /** SHOULD failures fail the run. */
  readonly strict: boolean;
  /** On a run that did not pass, leave the cluster and the scenarios' namespaces for inspection. */
  readonly keep: boolean;
  /** Write logs and operator logs go here (one folder per scenario). */
  readonly workDir: string;
  /** The cluster's component logs go here when the run does not pass. */
  readonly clusterLogsDir?: string;
  /**
   * How many scenarios may run side by side (default: DEFAULT_PARALLEL for a
   * namespaced operator, 1 otherwise). More than 1 needs
   * `operator.namespaced`: a cluster-wide operator in each scenario would act
   * on the other scenarios' objects.
   */
  readonly parallel?: number;
  /** This job's share of the scenarios (`--shard i/n`); default: all of them. */
  readonly shard?: Shard;
  /** Only this scenario, "<check id>#<target>" (`--scenario`): its check alone is selected. */
  readonly scenario?: string;
  /** Spec exploration's settings as the command line gave them over the contract's (a rerun repeats them). */
  readonly explorationFlags?: ExplorationFlags;
}

/** Progress of a run, for a console or a job log. */
export interface ProgressReporter {
  phase(line: string): void;
  checkStarted(check: CheckDefinition): void;
  step(check: CheckDefinition, line: string): void;
  checkFinished(report: CheckReport): void;
}

export interface RunDeps {
  readonly runner: CommandRunner;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly progress: ProgressReporter;
  /** Collects where the time goes (the run benchmark passes one). */
  readonly timings?: Timings;
}

/**
 * The core of the kit, called by the CLI and the Action alike: cluster ->
 * CRDs -> each selected check's scenarios -> cleanup, in reverse. Returns
 * the report; infrastructure failures (a cluster that did not start, a CRD
 * the server refused) throw.
 */
export async function runKit(config: RunConfig, deps: RunDeps): Promise<RunReport> {
  const started = deps.clock.now();
  const startedAt = isoNow(deps.clock);
  const selected = selectChecks(config);
  checkWaivers(config.contract);
  const today = dayOf(startedAt);
  const slots = new Limiter(scenarioParallelism(config));
  const shard = config.shard ?? WHOLE_RUN;
  const cleanups: (() => Promise<void>)[] = [];
  let passed = false;
  try {
    const provider = createProvider(config.cluster, deps);
    deps.progress.phase(`cluster: starting (${config.cluster.provider})`);
    const clusterStarted = deps.clock.now();
    const access = await provider.create({ signal: deps.signal });
    deps.timings?.add("cluster start", deps.clock.now() - clusterStarted);
    cleanups.push(async () => {
      if (config.cluster.provider === "existing") return;
      if (!passed && config.clusterLogsDir !== undefined) {
        // The components' own logs, for a run that failed, was inconclusive or did not finish.
        const files = await provider.collectLogs(config.clusterLogsDir).catch((error: unknown) => {
          deps.logger.warn(`could not collect the cluster's logs: ${describeError(error)}`);
          return [];
        });
        if (files.length > 0) {
          deps.progress.phase(`cluster logs: ${files.length} file(s) in ${config.clusterLogsDir}`);
        }
      }
      if (config.keep && !passed) {
        // Kept on purpose: no longer a leftover for `clean` (or the Action's post step) once the kit exits.
        await handOverCluster(config.cluster);
        deps.progress.phase(
          `cluster kept for inspection: KUBECONFIG=${access.kubeconfigPath} kubectl get all -A; remove it with: ${deleteClusterCommand(access.provider, access.name)}`,
        );
        return;
      }
      const deleting = deps.clock.now();
      await provider.delete();
      deps.timings?.add("cluster delete", deps.clock.now() - deleting);
    });
    const kube = KubeClient.fromKubeconfig(access.kubeconfigPath, access.context);
    cleanups.push(() => Promise.resolve(kube.close()));
    const { operator } = config.contract;
    const serving =
      operator.mode === "process" && operator.webhooks
        ? await prepareWebhookServing(
            operator.webhooks,
            join(config.workDir, "webhook-serving"),
            access.provider,
          )
        : undefined;
    if (serving) {
      deps.progress.phase(
        `webhooks: ${serving.webhooks.configurations.length} configuration(s), served by each scenario's operator; certificate in ${serving.certDir}`,
      );
      const oneAtATime = oneAtATimeReason(config.contract);
      if (oneAtATime && config.parallel === undefined) deps.progress.phase(oneAtATime);
    }
    deps.progress.phase(`installing ${config.contract.crds.length} CRD(s)`);
    await installCrds(kube, config.contract, serving, deps.signal);
    const fixtures = await resolveFixtures(kube, config.contract);
    const clusterFixtures = fixtures.filter((f) => !f.namespaced);
    if (clusterFixtures.length > 0) {
      deps.progress.phase(`creating ${clusterFixtures.length} cluster-scoped fixture(s)`);
      cleanups.push(() => deleteFixtures(kube, clusterFixtures));
      await createFixtures(kube, clusterFixtures, undefined);
    }

    await loadOperandImages(config.contract.images, access, deps);

    await mkdir(config.workDir, { recursive: true });
    const operators =
      operator.mode === "process"
        ? processLauncher(operator, config.contract.customResource, deps.logger, serving, deps.clock)
        : await prepareDeployedOperators(operator, config.contract.customResource, {
            runner: deps.runner,
            kube,
            logger: deps.logger,
            signal: deps.signal,
            cluster: { provider: access.provider, name: access.name },
          });
    let contract = config.contract;
    const scenarioDeps = (workDir: string): ScenarioDeps => ({
      operators,
      contract,
      kube,
      upstream: { kubeconfigPath: access.kubeconfigPath, context: access.context },
      workDir,
      logger: deps.logger,
      signal: deps.signal,
      clock: deps.clock,
      keep: () => config.keep,
      ...(deps.timings ? { timings: deps.timings } : {}),
      fixtures,
    });
    let references = new SpecReferences(scenarioDeps(join(config.workDir, "references")), slots);
    // Every reference the selected checks will ask for, computed now and side by side (each is
    // computed once and awaited by its askers; one that fails fails them, as it would later).
    const computeNeeded = () => {
      if (slots.capacity <= 1) return;
      for (const spec of referencesNeeded(KNOWN_CHECKS, selected, contract)) {
        references.forSpec(spec, (line) => deps.progress.phase(line)).catch(() => undefined);
      }
    };
    computeNeeded();
    let exploration: ExplorationReport | undefined;
    if (explorationWanted(selected, contract)) {
      const explored = await exploreForRun(contract, references, {
        deps: scenarioDeps(join(config.workDir, "explore")),
        slots,
        progress: (line) => deps.progress.phase(line),
      });
      if (explored) {
        ({ contract, references } = explored);
        exploration = explored.report;
        computeNeeded();
      }
    }
    config = { ...config, contract };
    // Every suite at once: their scenarios share the slots, so no slot idles while a suite's last
    // scenario finishes (one suite after another left up to three of four idle at each suite's
    // end). Verdicts are reported suite by suite, in the catalogue's order, as before.
    const suitesStarted = deps.clock.now();
    const steps = new SuiteProgress<CheckDefinition>((check, line) => deps.progress.step(check, line));
    const suiteRuns = SUITES.map((suite) => ({ suite, mine: suite.checks.filter((c) => selected.has(c.id)) }))
      .filter(({ mine }) => mine.length > 0)
      .map(({ suite, mine }, index) => {
        const finished = runSuite(
          suite,
          {
            deps: scenarioDeps(join(config.workDir, suite.name)),
            references,
            clock: deps.clock,
            progress: (line) => {
              const [first] = mine;
              if (first) steps.step(index, first, line);
            },
            sideBySide: (items, task) => slots.map(items, task),
            shard,
            ...(config.scenario === undefined ? {} : { only: config.scenario }),
          },
          selected,
        ).then((results) => ({ results, durationMs: deps.clock.now() - suitesStarted }));
        // Awaited in its turn; a failure before then is not an unhandled rejection meanwhile.
        finished.catch(() => undefined);
        return { mine, finished };
      });
    const suiteReports = (mine: readonly CheckDefinition[], results: ScenarioResult[], durationMs: number) =>
      mine.map((check) => {
        const report = judgeCheck(check, results, { config, today, durationMs });
        deps.progress.checkFinished(report);
        return report;
      });
    const checks: CheckReport[] = [];
    try {
      for (const [index, { mine, finished }] of suiteRuns.entries()) {
        for (const check of mine) deps.progress.checkStarted(check);
        steps.report(index);
        const { results, durationMs } = await finished;
        checks.push(...suiteReports(mine, results, durationMs));
      }
    } catch (error) {
      // No cluster is deleted under a suite still running: the others end first (an abort ends them all).
      await Promise.allSettled(suiteRuns.map((r) => r.finished));
      throw error;
    }
    await warnOfUnknownKinds(config.contract, references, deps.logger);
    const notices = await references.notices();
    if (exploration) exploration = await withNoEffect(exploration, references, contract);
    const waivers = waiverOutcomes(checks, config.contract.waivers, today);
    const status = runStatus(checks, waivers);
    passed = status === "passed" || status === "skipped" || status === "warned" || status === "waived";
    if (config.keep && !passed)
      await sayWhereKept(kube, access.kubeconfigPath, config.cluster.provider, deps);
    return {
      apiVersion: "reconcile-conformance.dev/v1alpha1",
      kind: "Report",
      status,
      strict: config.strict,
      startedAt,
      durationMs: deps.clock.now() - started,
      // From where the run started when it lies under it: shards of one matrix run in checkouts at
      // different absolute paths name the same file alike, and a report read elsewhere still says it.
      contract: pathFrom(process.cwd(), config.contract.file),
      cluster: { provider: access.provider, name: access.name },
      ...(shard.count > 1 ? { shard } : {}),
      checks,
      ...(notices.length > 0 ? { notices } : {}),
      ...(waivers.length > 0 ? { waivers } : {}),
      ...(exploration ? { exploration } : {}),
    };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) => deps.logger.warn(`cleanup: ${describeError(error)}`));
    }
  }
}

/** The checks this run judges: the contract's suites (or --suite), narrowed by --check. */
export function selectChecks(
  config: Pick<RunConfig, "contract" | "suites" | "checks" | "scenario">,
  names: Pick<SettingNames, "suites" | "checks" | "scenario"> = CLI_SETTINGS,
): Set<string> {
  const suites = new Set(["cluster", ...(config.suites ?? config.contract.suites)]);
  for (const name of config.suites ?? []) {
    if (!SUITES.some((s) => s.name === name) && !config.contract.suites.includes(name as never)) {
      throw new UsageError(
        "cli/unknown-suite",
        `${names.suites}: unknown suite "${name}": use ${SUITES.map((s) => s.name).join(", ")}`,
      );
    }
  }
  let selected = KNOWN_CHECKS.filter((c) => suites.has(c.id.split("/")[0] ?? ""));
  if (config.checks && config.checks.length > 0) {
    for (const id of config.checks) {
      if (!KNOWN_CHECKS.some((c) => c.id === id)) {
        throw new UsageError(
          "cli/unknown-check",
          `${names.checks}: unknown check "${id}": use one of ${KNOWN_CHECKS.map((c) => c.id).join(", ")}`,
        );
      }
    }
    selected = KNOWN_CHECKS.filter((c) => config.checks?.includes(c.id));
  }
  if (config.scenario !== undefined) {
    const check = scenarioCheck(config.scenario);
    if (!selected.some((c) => c.id === check)) {
      throw new UsageError(
        "cli/scenario-not-selected",
        `${names.scenario} ${JSON.stringify(config.scenario)}: its check ${check} is not among the selected ones (${selected.map((c) => c.id).join(", ")}); drop ${names.suites}/${names.checks}, or include it`,
      );
    }
    return new Set([check]);
  }
  return new Set(selected.map((c) => c.id));
}

/** The check of a scenario id, "<check id>#<target>"; a UsageError naming the id when it is not one. */
export function scenarioCheck(id: string): string {
  const hash = id.indexOf("#");
  const check = hash < 0 ? id : id.slice(0, hash);
  if (hash < 0 || hash === id.length - 1 || !KNOWN_CHECKS.some((c) => c.id === check)) {
    throw new UsageError(
      "cli/invalid-scenario",
      `--scenario ${JSON.stringify(id)}: expected "<check id>#<target>" as the report names it (e.g. "drift/managed-field#Service/hello spec.selector.app"), with a check id of ${KNOWN_CHECKS.map((c) => c.id).join(", ")}`,
    );
  }
  return check;
}

/**
 * The contract's `images` into a kind cluster, before the operator starts, so its children's Pods
 * start with no registry. kwok's Pods run no containers; an existing cluster pulls for itself.
 */
async function loadOperandImages(
  images: readonly string[],
  access: { readonly provider: string; readonly name: string },
  deps: Pick<RunDeps, "runner" | "logger" | "progress" | "signal">,
): Promise<void> {
  if (images.length === 0) return;
  if (access.provider !== "kind") {
    deps.logger.info(
      `images: not loaded into the ${access.provider} cluster (${access.provider === "kwok" ? "kwok's Pods run no containers" : "it pulls images itself"}): ${images.join(", ")}`,
    );
    return;
  }
  for (const image of images) {
    deps.progress.phase(`images: loading ${image} into kind cluster ${access.name}`);
    await loadImageIntoKind({
      runner: deps.runner,
      image,
      cluster: access.name,
      signal: deps.signal,
      setting: "images",
    });
  }
}

/** The command that deletes a cluster the kit kept. */
export function deleteClusterCommand(provider: string, name: string): string {
  return `npx reconcile-conformance cluster delete --provider ${provider} --name ${name}`;
}

/** Kept for inspection (`--keep`): the scenarios' namespaces, and how to look at them and remove them. */
async function sayWhereKept(
  kube: KubeClient,
  kubeconfigPath: string,
  provider: string,
  deps: Pick<RunDeps, "progress" | "logger">,
): Promise<void> {
  const namespaces = await kube.list("v1", "Namespace").catch((error: unknown) => {
    deps.logger.warn(`could not list the kept namespaces: ${describeError(error)}`);
    return [];
  });
  // A namespace already terminating (an earlier run's, being removed) is not kept.
  const kept = namespaces
    .filter((n) => n.metadata?.deletionTimestamp === undefined)
    .map((n) => n.metadata?.name ?? "")
    .filter((name) => name.startsWith("rc-"));
  for (const name of kept) {
    deps.progress.phase(
      `namespace kept for inspection: KUBECONFIG=${kubeconfigPath} kubectl -n ${name} get all,configmaps,events` +
        (provider === "existing" ? `; remove it with: kubectl delete namespace ${name}` : ""),
    );
  }
}

/**
 * A promise about a kind that is neither the custom resource's nor any
 * child's of the reference states never applies: most likely a misspelt
 * kind, which would otherwise go unnoticed.
 */
export async function warnOfUnknownKinds(
  contract: Pick<Contract, "file" | "promises" | "customResource">,
  references: Pick<SpecReferences, "childKinds">,
  logger: Pick<Logger, "warn">,
): Promise<void> {
  if (contract.promises.length === 0) return;
  const kinds = await references.childKinds();
  kinds.add(contract.customResource.kind);
  if (kinds.size === 1) return; // no reference state was computed: nothing to tell by
  for (const rule of contract.promises.filter((r) => !kinds.has(r.kind))) {
    logger.warn(
      `${contract.file}: ${rule.rule}.kind: "${rule.kind}" is neither the custom resource's kind nor a kind of its children in the reference states (${[...kinds].join(", ")}): it applied to nothing`,
    );
  }
}

/** Every waiver names a check the kit has: a misspelt id would otherwise never match and only read as stale. */
export function checkWaivers(contract: Pick<Contract, "file" | "waivers">): void {
  const problems = contract.waivers
    .filter((w) => !KNOWN_CHECKS.some((c) => c.id === w.check))
    .map((w) => `  ${w.rule}.check: unknown check "${w.check}"`);
  if (problems.length > 0) {
    throw new UsageError(
      "config/invalid",
      `${contract.file}: the contract is not valid:\n${problems.join("\n")}\n  known checks: ${KNOWN_CHECKS.map((c) => c.id).join(", ")}`,
    );
  }
}

/** Creates (or replaces) the contract's CRDs and waits until each is Established and served. */
async function installCrds(
  kube: KubeClient,
  contract: Contract,
  serving: WebhookServing | undefined,
  signal: AbortSignal,
): Promise<void> {
  const objects = crdsForServing(contract.crds, serving);
  for (const [index, { file }] of contract.crds.entries()) {
    const object = objects[index] ?? {};
    try {
      await kube.create(object);
    } catch (error) {
      if (!isAlreadyExists(error)) {
        throw new UsageError(
          "config/crd-refused",
          `${file}: the API server refused CRD ${object.metadata?.name ?? "?"}: ${describeError(error)}`,
        );
      }
      const live = await kube.get({
        apiVersion: object.apiVersion ?? "",
        kind: object.kind ?? "",
        name: object.metadata?.name ?? "",
      });
      await kube.replace({
        ...object,
        metadata: { ...object.metadata, resourceVersion: live.metadata?.resourceVersion },
      });
    }
  }
  for (const { object } of contract.crds) {
    const name = object.metadata?.name ?? "";
    await pollUntil(
      async () => {
        const crd = await kube.get<KubeObject>({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          name,
        });
        const conditions =
          (crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        const established = conditions.some((c) => c.type === "Established" && c.status === "True");
        return established
          ? { done: true, value: undefined }
          : { done: false, reason: `CRD ${name} not Established yet` };
      },
      { description: `CRD ${name} to be Established`, timeoutMs: contract.timeouts.crdEstablishedMs, signal },
    );
  }
  const { group, version, kind } = contract.customResource;
  await pollUntil(
    async () => {
      await kube.list(group ? `${group}/${version}` : version, kind);
      return { done: true, value: undefined };
    },
    { description: `${kind} to be served`, timeoutMs: contract.timeouts.crdEstablishedMs, signal },
  );
}
