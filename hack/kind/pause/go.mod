// The sandbox ("pause") container's program for the node image: the upstream
// one is a small C program in kubernetes/build/pause; this does the same.
module reconcile-conformance.dev/kind/pause

go 1.25.0
