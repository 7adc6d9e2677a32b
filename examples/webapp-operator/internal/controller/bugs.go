package controller

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Bug selects one seeded mistake; the empty Bug is the correct operator.
// (A Bug in Variants is no mistake: a correct alternative behaviour.)
// Each is a faithful, minimal version of a mistake real operators make, and
// each breaks exactly one rule of idempotent reconciliation. The table in
// README.md lists the conformance checks that must fail on each.
type Bug string

const (
	// None is the reference behaviour.
	None Bug = ""
	// GenerateName creates the Deployment with generateName but looks it up by
	// the fixed name, so every reconcile adds another one.
	GenerateName Bug = "generate-name"
	// IgnoreAlreadyExists always creates the Service and treats AlreadyExists
	// as success without reading what is there.
	IgnoreAlreadyExists Bug = "ignore-already-exists"
	// DeepEqualUpdate compares the whole desired Deployment spec with the live
	// one, which the server has defaulted, and updates whenever they differ.
	DeepEqualUpdate Bug = "deep-equal-update"
	// StatusEveryReconcile stamps Ready with lastTransitionTime = now and writes
	// status on every reconcile.
	StatusEveryReconcile Bug = "status-every-reconcile"
	// StaleRetry retries a conflicting Deployment update with the object read
	// before the retry loop, so every retry conflicts again.
	StaleRetry Bug = "stale-retry"
	// BlindOverwrite answers a conflict by copying the latest resourceVersion
	// onto its stale object and resubmitting, erasing the other writer's change.
	BlindOverwrite Bug = "blind-overwrite"
	// RecreateOnDrift deletes and recreates a child whose managed fields differ.
	RecreateOnDrift Bug = "recreate-on-drift"
	// NoDriftRepair creates missing children and never updates existing ones.
	NoDriftRepair Bug = "no-drift-repair"
	// ReplaceWholeObject updates children by PUTting a freshly built object with
	// the live resourceVersion, dropping other writers' labels and annotations.
	ReplaceWholeObject Bug = "replace-whole-object"
	// NameWithoutUID names the registration registration-<name> without an
	// owner reference and reuses whatever it finds under that name.
	NameWithoutUID Bug = "name-without-uid"
	// CrashGap creates the Service only in the reconcile that created the
	// Deployment; a crash between the two leaves it missing for good.
	CrashGap Bug = "crash-gap"
	// EarlyReady writes Ready with observedGeneration = generation before the
	// children are updated to that generation's spec.
	EarlyReady Bug = "early-ready"
	// StaleStatusGeneration, after a status conflict, re-reads the object and
	// stamps its new generation on conclusions drawn from the old spec.
	StaleStatusGeneration Bug = "stale-status-generation"
	// TimestampInTemplate writes the current time into a pod-template
	// annotation on every reconcile, rolling the Deployment each time.
	TimestampInTemplate Bug = "timestamp-in-template"
	// RecreateOnAlreadyExists, when a create answers AlreadyExists for a child
	// its cache does not show yet, takes the child for an unknown leftover,
	// deletes it and creates it again.
	RecreateOnAlreadyExists Bug = "recreate-on-already-exists"
	// EventDiff updates existing children only for the change it reads from
	// an update event's old and new objects, one change per event (replicas,
	// else the rest), so an event that carries two changes loses one.
	EventDiff Bug = "event-diff"
	// RegenerateSecret is GeneratedSecret with the password kept only in the
	// process's memory: a restarted operator generates another and writes it
	// over the one the Secret has.
	RegenerateSecret Bug = "regenerate-secret"
	// UIDPrefixTakeover is UIDPrefixName with no owner reference and a lookup
	// by label instead of by name: a recreated WebApp takes over the
	// registration of its previous life, named from the previous UID.
	UIDPrefixTakeover Bug = "uid-prefix-takeover"
	// PortOnlyAtCreate sets the Deployment's container port when it creates
	// the Deployment and never brings it to a later spec: the Service follows
	// a port change, the Pods keep listening on the old port.
	PortOnlyAtCreate Bug = "port-only-at-create"
	// NeverPrunes copies the registration's desired keys onto the live
	// ConfigMap and never removes one: after a port change the registration
	// still lists the old port's endpoint beside the new one.
	NeverPrunes Bug = "never-prunes"

	// The four mutants below make mistakes that only a change the example's
	// contract never writes shows: spec exploration's generated updates
	// catch them (a nested field changed, a map key removed, a boolean
	// turned off, a list shortened).

	// AffinityOnlyAtCreate sets the Service's session affinity when it
	// creates the Service and never brings it to a later spec.
	AffinityOnlyAtCreate Bug = "affinity-only-at-create"
	// SettingsNeverPruned publishes the spec's settings in the registration
	// and never removes the key of a setting the spec no longer has.
	SettingsNeverPruned Bug = "settings-never-pruned"
	// VerboseLabelKept labels the Pods verbose when the spec says so, and
	// never takes the label away when it stops saying so.
	VerboseLabelKept Bug = "verbose-label-kept"
	// AliasesNeverShortened publishes the aliases by position and never
	// removes the keys past the spec's last alias.
	AliasesNeverShortened Bug = "aliases-never-shortened"
	// PanicOnNoAlias publishes its first alias as the registration's primary
	// host without checking that there is one: a spec without aliases makes
	// every reconcile panic (controller-runtime recovers it and retries).
	PanicOnNoAlias Bug = "panic-on-no-alias"
	// ReplaceSkipsPort replaces the Service when the spec's port changes
	// (deleted, then made again), and brings the Deployment's container port
	// to the new port in between, on that path only (elsewhere the port is
	// the create's, as PortOnlyAtCreate's). A crash right after the delete
	// restarts into a reconcile that finds no Service and takes the create
	// path: the Deployment keeps the old port for good. Only a fault on the
	// way to an update shows it: every fault-free life goes through the
	// replacement whole.
	ReplaceSkipsPort Bug = "replace-skips-port"
	// FlipWithinReconcile polls every second while the Deployment is not
	// available (a common, correct habit) and, in each poll, first marks
	// Ready=True because every child exists, then Ready=False because the
	// Deployment is unavailable: the condition stays False, but every poll
	// gives it a new lastTransitionTime, a transition that did not happen.
	FlipWithinReconcile Bug = "flip-within-reconcile"
	// ReleaseBeforeCleanup releases the finalizer first and deletes the
	// directory entry after: a crash between the two leaves the entry behind
	// with nothing left to remove it.
	ReleaseBeforeCleanup Bug = "release-before-cleanup"
	// CleanupInMemory deletes the directory entry it remembers creating: a
	// process that restarted since remembers none, releases the finalizer and
	// leaves the entry behind.
	CleanupInMemory Bug = "cleanup-in-memory"
	// ResurrectWhileTerminating reconciles the children of a WebApp that is
	// being deleted as if it were not: what the garbage collector removes
	// during a foreground deletion is created again.
	ResurrectWhileTerminating Bug = "resurrect-while-terminating"
	// CleanupGivesUp releases the finalizer when the directory entry's delete
	// fails, once: the entry stays behind.
	CleanupGivesUp Bug = "cleanup-gives-up"

	// The mutants below are ClockTicks with one mistake each: a schedule's
	// mistakes, which only a life long enough to see its ticks shows. They
	// are the clock matrix's (kill-matrix.clock.yaml), not AllBugs.

	// TickRerunAfterRestart remembers in memory which ticks it ran: a new
	// process, remembering none, runs the latest due tick again, and finding
	// that tick's ConfigMap already there, names its run
	// <name>-tick-<k>-<process id>: after a restart, two children for one
	// tick.
	TickRerunAfterRestart Bug = "tick-rerun-after-restart"
	// TickNameWithoutTick names every tick's ConfigMap <name>-tick, without
	// the tick's number: each tick updates the one ConfigMap's data, so the
	// second tick overwrites the first.
	TickNameWithoutTick Bug = "tick-name-without-tick"
	// TickStatusGap records the last tick it made in status.lastTick and
	// decides what to make from that record instead of from its children,
	// each tick's ConfigMap made with generateName <name>-tick-: a crash
	// between a tick's create and the status write that records it makes
	// the restarted process create that tick's ConfigMap again.
	TickStatusGap Bug = "tick-status-gap"

	// Heartbeat is not a mistake but a variant: a heartbeat a real operator
	// may write on purpose. It stamps status.lastHeartbeatTime whenever the
	// stored one is missing or HeartbeatInterval old, and asks to be
	// reconciled again after HeartbeatInterval, so the status changes on a
	// timer while nothing else does. Everything else is the reference.
	Heartbeat Bug = "heartbeat"

	// The variants below are styles of other operators the kit must judge as
	// correct as the reference. Each changes one habit and nothing else.

	// UIDPrefixName names the registration registration-<first 8 hex digits
	// of the WebApp's UID> (names are limited to 63 characters).
	UIDPrefixName Bug = "uid-prefix-name"
	// HashName names the registration registration-<first 10 hex digits of
	// the SHA-256 of namespace/name>.
	HashName Bug = "hash-name"
	// GeneratedSecret adds a fourth child, the Secret <name>-auth, whose
	// password is generated at random when it is created and kept for the
	// Secret's life: never regenerated, never compared with anything.
	GeneratedSecret Bug = "generated-secret"
	// StatusJitter stands for an operator whose number of status writes
	// varies with timing: while the Deployment is not yet available, a
	// reconcile may (at random, as timing would) add a transient
	// Degraded=True condition, removed once the Deployment is available.
	StatusJitter Bug = "status-jitter"
	// ApplyChild creates and repairs the registration with server-side apply
	// (an apply that creates it is a create) when it differs, instead of
	// create and update.
	ApplyChild Bug = "apply-child"
	// RandomPortOrder gives the Service a second, named port (admin, the
	// spec's port + 1) and lists the Service's ports in a random order each
	// time it builds the Service, as an operator that builds them from a Go
	// map does. Its drift repair compares the ports by name, never by
	// position: an order alone is never rewritten, and a drifted port is
	// repaired where it stands.
	RandomPortOrder Bug = "random-port-order"
	// LeaderConfigMap keeps, besides everything the reference does, a
	// leader-election record of its own as client-go's old ConfigMap lock
	// did: the ConfigMap webapp-operator-leader-<watch namespace> in the
	// namespace default, its control-plane.alpha.kubernetes.io/leader
	// annotation a JSON leader record, written when the manager starts and
	// renewed every LeaderRenewInterval by a manager Runnable (leader.go),
	// never by the reconciler.
	LeaderConfigMap Bug = "leader-configmap"
	// DotFinalizer names its finalizer dot-qualified, DotFinalizerName
	// (deletion.finalizers.webapps.<the CRD's group>), instead of the
	// reference's <group>/directory.
	DotFinalizer Bug = "dot-finalizer"
	// ClockTicks does everything the reference does and, besides, runs a
	// schedule of its own, as a cron-like operator does: a tick at every
	// multiple of TickPeriod of Unix time (the wall clock, so where the
	// ticks fall after the WebApp's creation varies from life to life), at
	// most MaxTicks after the WebApp's creationTimestamp, each the owned
	// ConfigMap <name>-tick-<k> (ticks.go). What is due is computed from the
	// creation time and the clock at every reconcile, so a restart neither
	// repeats nor loses a tick; it asks to be reconciled again at the next
	// boundary (RequeueAfter) while ticks remain. Ready is the reference's.
	ClockTicks Bug = "clock-ticks"
)

// PollInterval is how often the FlipWithinReconcile mutant reconciles again
// while the Deployment is not available.
const PollInterval = time.Second

// HeartbeatInterval is how often the Heartbeat variant refreshes
// status.lastHeartbeatTime.
const HeartbeatInterval = 3 * time.Second

// TickPeriod is the ClockTicks schedule's period: a tick at every multiple
// of it of Unix time.
const TickPeriod = 5 * time.Second

// MaxTicks is how many ticks the ClockTicks schedule makes after a WebApp's
// creation.
const MaxTicks = 3

// AllBugs lists every mutant: the kill matrix's list, without the Variants
// and the clock matrix's ClockBugs.
var AllBugs = []Bug{
	GenerateName, IgnoreAlreadyExists, DeepEqualUpdate, StatusEveryReconcile, StaleRetry,
	BlindOverwrite, RecreateOnDrift, NoDriftRepair, ReplaceWholeObject, NameWithoutUID,
	CrashGap, EarlyReady, StaleStatusGeneration, TimestampInTemplate, RecreateOnAlreadyExists,
	EventDiff, RegenerateSecret, UIDPrefixTakeover, PortOnlyAtCreate, NeverPrunes, FlipWithinReconcile,
	ReleaseBeforeCleanup, CleanupInMemory, ResurrectWhileTerminating, CleanupGivesUp,
	AffinityOnlyAtCreate, SettingsNeverPruned, VerboseLabelKept, AliasesNeverShortened, PanicOnNoAlias,
	ReplaceSkipsPort,
}

// ClockBugs lists the mutants of ClockTicks: the clock matrix's
// (kill-matrix.clock.yaml, run with a clock horizon).
var ClockBugs = []Bug{TickRerunAfterRestart, TickNameWithoutTick, TickStatusGap}

// Variants lists the legitimate alternatives to the reference behaviour:
// selected like a mutant, but correct. The kill matrix lists each but the
// heartbeat under `variants`: every check must pass on them.
var Variants = []Bug{
	Heartbeat, UIDPrefixName, HashName, GeneratedSecret, StatusJitter, ApplyChild,
	RandomPortOrder, LeaderConfigMap, DotFinalizer, ClockTicks,
}

// ticks: the Bugs that run the ClockTicks schedule (ticks.go).
func (b Bug) ticks() bool { return b == ClockTicks || slices.Contains(ClockBugs, b) }

// generatesSecret: the Bugs with the <name>-auth Secret.
func (b Bug) generatesSecret() bool { return b == GeneratedSecret || b == RegenerateSecret }

// ParseBug validates a --bug / WEBAPP_BUG value: a mutant or a variant.
func ParseBug(value string) (Bug, error) {
	if value == "" || value == "none" {
		return None, nil
	}
	for _, b := range slices.Concat(AllBugs, ClockBugs, Variants) {
		if string(b) == value {
			return b, nil
		}
	}
	return None, fmt.Errorf("unknown bug %q: use one of %s (mutants) or %s (variants)",
		value, sortedNames(slices.Concat(AllBugs, ClockBugs)), sortedNames(Variants))
}

func sortedNames(bugs []Bug) string {
	names := make([]string, len(bugs))
	for i, b := range bugs {
		names[i] = string(b)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
