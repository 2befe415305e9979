#!/usr/bin/env bash
# Fetches the Debian documentation packages the near-duplicate evaluation is built from, into
# bench/out/deb (gitignored): the PostgreSQL manual at three major versions (13, 15, 17: the
# tuning corpus) and the Python manual at three (3.9, 3.11, 3.13: held out). The versions come
# from three Debian releases, so apt runs with its own lists under bench/out/apt and leaves the
# system's sources alone. Versions are pinned: the corpus is the same every time, and a version
# gone from the archive stops the script instead of changing the data.
# Then `node bench/near-dup-corpus.js` writes the JSON lines and the ground truth.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p out/deb out/apt/state/lists/partial out/apt/cache/archives/partial
root=$(pwd)/out/apt
cat > "$root/sources.list" <<LIST
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bullseye-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security trixie-security main
LIST
apt=(-o "Dir::State=$root/state" -o "Dir::Cache=$root/cache" -o "Dir::Etc::SourceList=$root/sources.list"
     -o "Dir::Etc::SourceParts=/dev/null" -o "Dir::State::status=/var/lib/dpkg/status" -o "APT::Sandbox::User=root")
packages=(
  "postgresql-doc-13=13.16-0+deb11u1"
  "postgresql-doc-15=15.20-0+deb12u1"
  "postgresql-doc-17=17.12-0+deb13u1"
  "python3.9-doc=3.9.2-1"
  "python3.11-doc=3.11.2-6+deb12u9"
  "python3.13-doc=3.13.5-2+deb13u5"
)
updated=0
cd out/deb
for spec in "${packages[@]}"; do
  name=${spec%%=*}
  version=${spec#*=}
  dir="${name}_${version}"
  [ -d "$dir" ] && continue
  if [ $updated = 0 ]; then apt-get "${apt[@]}" update -qq; updated=1; fi
  apt-get "${apt[@]}" download "$spec" || { echo "cannot download $spec" >&2; exit 1; }
  mkdir -p "$dir"
  dpkg-deb -x "${name}_${version//:/%3a}_all.deb" "$dir"
  rm -f "${name}_${version//:/%3a}_all.deb"
done
echo "extracted into $(pwd)"
