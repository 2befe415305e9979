#!/usr/bin/env bash
# Builds bench/out/crawl-stream.txt, a real crawl-order link stream: the Debian documentation
# packages of Python 3.11, PostgreSQL 15 and Rust 1.63 (downloaded with apt-get, unpacked here),
# each crawled breadth-first from its index by bench/crawl-links.js.
set -euo pipefail
cd "$(dirname "$0")/out" 2>/dev/null || { mkdir -p "$(dirname "$0")/out"; cd "$(dirname "$0")/out"; }
mkdir -p debs x
(cd debs && apt-get download python3.11-doc postgresql-doc-15 rust-doc)
for deb in debs/*.deb; do
  name=$(basename "$deb" .deb)
  [ -d "x/$name" ] || { mkdir -p "x/$name" && dpkg-deb -x "$deb" "x/$name"; }
done
py=$(ls -d x/python3.11-doc_*/usr/share/doc/python3.11/html)
pg=$(ls -d x/postgresql-doc-15_*/usr/share/doc/postgresql-doc-15/html)
rs=$(ls -d x/rust-doc_*/usr/share/doc/rust-doc/html)
node ../crawl-links.js "$py" https://docs.python.org/3.11/ "$pg" https://www.postgresql.org/docs/15/ "$rs" https://doc.rust-lang.org/1.63.0/ > crawl-stream.txt
wc -l crawl-stream.txt
