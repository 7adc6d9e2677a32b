package controller

import (
	"slices"
	"strings"
	"testing"
)

func TestParseBug(t *testing.T) {
	for _, value := range []string{"", "none"} {
		if bug, err := ParseBug(value); err != nil || bug != None {
			t.Errorf("ParseBug(%q) = %q, %v; want the reference", value, bug, err)
		}
	}
	for _, bug := range AllBugs {
		if got, err := ParseBug(string(bug)); err != nil || got != bug {
			t.Errorf("ParseBug(%q) = %q, %v", bug, got, err)
		}
	}
	if len(AllBugs) != 31 {
		t.Errorf("%d mutants, the README's table has 31", len(AllBugs))
	}
	for _, bug := range ClockBugs {
		if got, err := ParseBug(string(bug)); err != nil || got != bug || slices.Contains(AllBugs, bug) || slices.Contains(Variants, bug) {
			t.Errorf("ParseBug(%q) = %q, %v; a clock mutant, in AllBugs: %v, in Variants: %v",
				bug, got, err, slices.Contains(AllBugs, bug), slices.Contains(Variants, bug))
		}
		if !bug.ticks() {
			t.Errorf("%s: a clock mutant that runs no schedule", bug)
		}
	}
	if !ClockTicks.ticks() || !slices.Contains(Variants, ClockTicks) || None.ticks() {
		t.Errorf("clock-ticks is a variant with a schedule; the reference has none")
	}
	for _, bug := range Variants {
		if got, err := ParseBug(string(bug)); err != nil || got != bug || slices.Contains(AllBugs, bug) {
			t.Errorf("ParseBug(%q) = %q, %v; in AllBugs: %v", bug, got, err, slices.Contains(AllBugs, bug))
		}
	}
	// A variant is selected the same way but is no mutant: the kill matrix never lists it.
	if got, err := ParseBug("heartbeat"); err != nil || got != Heartbeat || slices.Contains(AllBugs, Heartbeat) {
		t.Errorf("ParseBug(heartbeat) = %q, %v; in AllBugs: %v", got, err, slices.Contains(AllBugs, Heartbeat))
	}
	_, err := ParseBug("off-by-one")
	if err == nil || !strings.Contains(err.Error(), `unknown bug "off-by-one"`) || !strings.Contains(err.Error(), "crash-gap") ||
		!strings.Contains(err.Error(), "heartbeat") || !strings.Contains(err.Error(), "tick-status-gap") {
		t.Errorf("ParseBug(off-by-one) error = %v; want one naming the value and the choices", err)
	}
}
