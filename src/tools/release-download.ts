/*
 * The download of one release file: fetched with an idle watchdog, hashed
 * on the way, checked against the digest its publisher published, and
 * taken out of its archive where it comes in one. Each failure is named by
 * a ReleaseErrorCode: unreachable, an HTTP status, a stall, a mismatch.
 */
import { createHash } from "node:crypto";
import { chmod, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { AbortedError, describeError, InfrastructureError } from "../errors.js";
import type { Logger } from "../util/logger.js";
import { VERSION } from "../version.js";
import { readTarGzMember, readZipMember } from "./archive-readers.js";
import type { ReleaseChecksum, ReleaseFile } from "./download-plan.js";
import { publishedSha256 } from "./published-checksum.js";
import { ReleaseErrorCode } from "./release-error-codes.js";
import type { StampedFile } from "./release-stamp.js";

/** Where a download's files land inside the staging directory before they are checked. */
export const DOWNLOADS_SUBDIR = ".downloads";
const PROGRESS_INTERVAL_MS = 10_000;

/** Node's error codes that mean the host was never reached, as opposed to a transfer that broke. */
const UNREACHABLE_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Why a fetch that produced no response never reached its host (e.g.
 * `ECONNREFUSED`), or undefined when it failed for another reason. fetch
 * throws "fetch failed" with the socket's error as its cause, and when
 * several addresses were tried, an AggregateError of them.
 */
export function unreachableReason(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (typeof current !== "object") continue;
    if ("code" in current && typeof current.code === "string" && UNREACHABLE_CODES.has(current.code)) {
      return current.code;
    }
    if ("cause" in current) pending.push(current.cause);
    if (current instanceof AggregateError) {
      const errors: unknown[] = current.errors;
      pending.push(...errors);
    }
  }
  return undefined;
}

/** What the downloads of one bin directory share: the logger, the watchdog's timeout, the signals, the token. */
export interface DownloadSession {
  readonly logger: Logger;
  readonly idleTimeoutMs: number;
  /** Fires when the caller aborts or another file failed. */
  readonly signal: AbortSignal;
  /** The caller's own signal: an abort from it is an AbortedError, not a network failure. */
  readonly userSignal: AbortSignal | undefined;
  readonly githubToken: string | undefined;
  /** Checksum sources by URL: kwok and kwokctl share one release record. */
  readonly publishedTexts: Map<string, Promise<string>>;
}

/** Downloads one file into `staging`, checks it, and leaves the binary at `staging/<name>`, executable. */
export async function fetchVerified(
  file: ReleaseFile,
  staging: string,
  session: DownloadSession,
): Promise<StampedFile> {
  if (session.signal.aborted) throw cancelled(session);
  // The published digest first: no point fetching 100 MB that cannot be verified.
  const expected = publishedSha256(file, await publishedText(file.checksum, session));
  const download = join(staging, DOWNLOADS_SUBDIR, basename(new URL(file.url).pathname));
  const { sha256, bytes } = await fetchToFile(file, download, session);
  if (sha256 !== expected) {
    throw new InfrastructureError(
      ReleaseErrorCode.checksumMismatch,
      `kube binaries: ${file.name}: the download from ${file.url} has SHA-256 ${sha256}, ` +
        `but ${file.checksum.url} publishes ${expected}: refusing it`,
    );
  }
  const target = join(staging, file.name);
  const stamped: StampedFile = {
    name: file.name,
    source: file.source,
    url: file.url,
    checksumUrl: file.checksum.url,
    sha256,
    bytes,
  };
  if (file.extract) {
    const archive = await readFile(download);
    let binary: Buffer;
    try {
      binary =
        file.extract.archive === "tar.gz"
          ? readTarGzMember(archive, file.extract.member)
          : readZipMember(archive, file.extract.member);
    } catch (error) {
      throw new InfrastructureError(
        ReleaseErrorCode.extractFailed,
        `kube binaries: ${file.name}: cannot take ${file.extract.member} out of ${file.url} (its checksum matched): ${describeError(error)}`,
        [],
        { cause: error },
      );
    }
    await writeFile(target, binary, { mode: 0o755 });
    await rm(download, { force: true });
    await chmod(target, 0o755);
    return {
      ...stamped,
      member: file.extract.member,
      binarySha256: createHash("sha256").update(binary).digest("hex"),
    };
  }
  await rename(download, target);
  await chmod(target, 0o755);
  return stamped;
}

/** A checksum source's text, fetched once per URL per download. */
function publishedText(checksum: ReleaseChecksum, session: DownloadSession): Promise<string> {
  let text = session.publishedTexts.get(checksum.url);
  if (!text) {
    text = fetchText(checksum, session);
    session.publishedTexts.set(checksum.url, text);
  }
  return text;
}

async function fetchText(checksum: ReleaseChecksum, session: DownloadSession): Promise<string> {
  const what = `checksum source ${checksum.url}`;
  const { response, idle } = await openUrl(
    checksum.url,
    what,
    session,
    checksum.format === "github-release-digest",
  );
  try {
    return await response.text();
  } catch (error) {
    throw transferFailure(checksum.url, what, error, idle, session, "transfer");
  } finally {
    idle.stop();
  }
}

/** Streams a download into `path`, hashing it on the way; logs sizes as it goes. */
async function fetchToFile(
  file: ReleaseFile,
  path: string,
  session: DownloadSession,
): Promise<{ sha256: string; bytes: number }> {
  const { logger } = session;
  const started = Date.now();
  const { response, idle } = await openUrl(file.url, file.name, session, false);
  const declared = Number(response.headers.get("content-length") ?? NaN);
  const size = Number.isFinite(declared) ? formatBytes(declared) : "size unknown";
  logger.info(`kube binaries: ${file.name}: downloading ${size} from ${file.url}`);
  const hash = createHash("sha256");
  let bytes = 0;
  let lastProgress = started;
  const handle = await open(path, "w");
  try {
    const reader = response.body?.getReader();
    if (!reader) throw new Error("the response has no body");
    for (;;) {
      const chunk = await readChunk(reader);
      if (chunk.done) break;
      idle.touch();
      hash.update(chunk.value);
      bytes += chunk.value.length;
      await handle.write(chunk.value);
      if (Date.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
        lastProgress = Date.now();
        logger.info(`kube binaries: ${file.name}: ${formatBytes(bytes)} of ${size}`);
      }
    }
  } catch (error) {
    throw transferFailure(file.url, file.name, error, idle, session, "transfer");
  } finally {
    idle.stop();
    await handle.close();
  }
  const sha256 = hash.digest("hex");
  logger.info(`kube binaries: ${file.name}: ${formatBytes(bytes)} in ${seconds(Date.now() - started)}`);
  return { sha256, bytes };
}

/** One chunk of a fetch body, checked to be bytes (the DOM types leave it `any`). */
async function readChunk(
  reader: ReadableStreamDefaultReader<unknown>,
): Promise<{ done: true } | { done: false; value: Uint8Array }> {
  const result = await reader.read();
  if (result.done) return { done: true };
  const value: unknown = result.value;
  if (!(value instanceof Uint8Array)) throw new Error("the response body is not a byte stream");
  return { done: false, value };
}

/** Gives up on a request or a body when nothing arrives for `timeoutMs`. */
class IdleWatch {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;

  constructor(readonly timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`nothing received for ${timeoutMs} ms`));
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    this.timer.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** Sends a GET (redirects followed) and returns the 2xx response, or the error that says why not. */
async function openUrl(
  url: string,
  what: string,
  session: DownloadSession,
  githubApi: boolean,
): Promise<{ response: Response; idle: IdleWatch }> {
  const idle = new IdleWatch(session.idleTimeoutMs);
  const headers: Record<string, string> = { "user-agent": `reconcile-conformance/${VERSION}` };
  if (githubApi) {
    headers.accept = "application/vnd.github+json";
    headers["x-github-api-version"] = "2022-11-28";
    if (session.githubToken) headers.authorization = `Bearer ${session.githubToken}`;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: "follow",
      headers,
      signal: AbortSignal.any([session.signal, idle.signal]),
    });
  } catch (error) {
    idle.stop();
    throw transferFailure(url, what, error, idle, session, "connect");
  }
  if (!response.ok) {
    idle.stop();
    await response.body?.cancel().catch(() => undefined);
    const redirected = response.url && response.url !== url ? ` (redirected to ${response.url})` : "";
    throw new InfrastructureError(
      ReleaseErrorCode.httpStatus,
      `kube binaries: ${what}: GET ${url}${redirected} answered ${response.status} ${response.statusText}`.trimEnd(),
    );
  }
  idle.touch();
  return { response, idle };
}

/** Names a failed request: aborted, unreachable (never connected, or no answer) or broken mid-transfer. */
function transferFailure(
  url: string,
  what: string,
  error: unknown,
  idle: IdleWatch,
  session: DownloadSession,
  stage: "connect" | "transfer",
): Error {
  if (session.userSignal?.aborted) return new AbortedError(`kube binaries: ${what}: download aborted`);
  if (session.signal.aborted) return cancelled(session);
  if (idle.timedOut) {
    return stage === "connect"
      ? new InfrastructureError(
          ReleaseErrorCode.unreachable,
          `kube binaries: ${what}: GET ${url}: no answer within ${seconds(idle.timeoutMs)}`,
        )
      : new InfrastructureError(
          ReleaseErrorCode.downloadFailed,
          `kube binaries: ${what}: GET ${url}: the transfer stalled (nothing received for ${seconds(idle.timeoutMs)})`,
        );
  }
  const reason = stage === "connect" ? unreachableReason(error) : undefined;
  if (reason) {
    return new InfrastructureError(
      ReleaseErrorCode.unreachable,
      `kube binaries: ${what}: GET ${url}: unreachable (${reason}): ${describeError(error)}`,
      [],
      { cause: error },
    );
  }
  return new InfrastructureError(
    ReleaseErrorCode.downloadFailed,
    `kube binaries: ${what}: GET ${url} failed: ${describeError(error)}`,
    [],
    { cause: error },
  );
}

function cancelled(session: DownloadSession): Error {
  return session.userSignal?.aborted
    ? new AbortedError("kube binaries: download aborted")
    : new AbortedError("kube binaries: cancelled because another file failed");
}

/** A size for progress lines: B, KiB or MiB with one decimal. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** A duration for progress lines: seconds with one decimal. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
