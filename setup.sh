#!/bin/sh
# One command from a fresh clone on Debian: installs what the build needs
# (apt-get when root; otherwise prints the apt-get line and stops), runs the
# autotools steps, builds bitprobe, runs the default probe suite and, as
# root, installs it (make install: bitprobe on PATH, the probes and goldens
# under $prefix/share/bitprobe); otherwise says how to.
# Extra configure flags: BITPROBE_CONFIGURE="--without-cuda" sh setup.sh
set -eu
cd "$(dirname "$0")"
pkgs="build-essential autoconf automake pkg-config libyaml-dev zlib1g-dev
      libjansson-dev check libsubunit-dev libmpfr-dev libgmp-dev libsleef-dev
      mandoc python3"
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends $missing
    else
        echo "bitprobe needs these Debian packages; as root, run:" >&2
        echo "  apt-get install -y$missing" >&2
        exit 1
    fi
fi
[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] ||
    autoreconf -fi
[ -f Makefile ] && [ Makefile -nt configure ] || ./configure ${BITPROBE_CONFIGURE:-}
make -j"$(nproc)"
./src/bitprobe run --quiet
if [ "$(id -u)" -eq 0 ]; then
    make install
    echo "setup.sh: installed $(sed -n 's/^prefix = //p' Makefile)/bin/bitprobe: 'bitprobe --help' in a new shell"
else
    echo "setup.sh: built src/bitprobe; to run it as 'bitprobe', install it as root" \
         "(make install), or put $(pwd)/src on PATH" >&2
fi
