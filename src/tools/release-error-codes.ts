/*
 * The stable codes of the errors a release download raises, shared by the
 * plan, the checksum reader and the download, so a caller can react to each.
 */

/** Stable codes of the errors a release download raises, so a caller can react to each (fall back to the Go build). */
export const ReleaseErrorCode = {
  /** No connection: DNS failed, connection refused or reset, or no answer before the idle timeout. */
  unreachable: "kube-binaries/unreachable",
  /** The server answered with a status other than 2xx (after redirects). */
  httpStatus: "kube-binaries/http-status",
  /** The file's SHA-256 differs from the published one. */
  checksumMismatch: "kube-binaries/checksum-mismatch",
  /** The checksum source has no well-formed digest for the file. */
  checksumMissing: "kube-binaries/checksum-missing",
  /** The connection broke or stalled during the download. */
  downloadFailed: "kube-binaries/download-failed",
  /** The verified archive does not hold the binary, or is damaged. */
  extractFailed: "kube-binaries/extract-failed",
  /** No release is published for this OS or architecture. */
  unsupportedPlatform: "kube-binaries/unsupported-platform",
  /** Writing into the bin directory's parent failed. */
  installFailed: "kube-binaries/install-failed",
} as const;
