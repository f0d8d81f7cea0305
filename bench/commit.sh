#!/bin/sh
# Prints the commit the benches ran from, and says so when the sources
# differ from it (a copied tree whose git metadata lags behind, or local
# edits): numbers then belong to the tree, not to that commit.
#   sh bench/commit.sh [SRCDIR]
cd "${1:-.}" 2>/dev/null || exit 0
c=$(git rev-parse --short HEAD 2>/dev/null) || { echo "commit: unknown (no git)"; exit 0; }
if git diff --quiet HEAD -- src kernels configure.ac Makefile.am bench 2>/dev/null; then
    echo "commit: $c"
else
    echo "commit: $c, with changes to its sources (the numbers are the tree's, not $c's)"
fi
