#!/usr/bin/env bash
# Builds two real crawl-order link streams in bench/out/, from Debian documentation packages
# (downloaded with apt-get, unpacked here), each site crawled breadth-first from its index by
# bench/crawl-links.js:
# - crawl-stream.txt: Python 3.11, PostgreSQL 15 and Rust 1.63, links without their fragments
#   (2.5 M lines, 36 k distinct: what a crawler's frontier sees after dropping fragments);
# - crawl-fragments.txt: the same three plus Django 3.2, Node.js 18 and Boost 1.74, links as
#   extracted, fragments kept (2.6 M lines, 0.33 M distinct, 89% repeats: a raw link stream).
set -euo pipefail
cd "$(dirname "$0")/out" 2>/dev/null || { mkdir -p "$(dirname "$0")/out"; cd "$(dirname "$0")/out"; }
mkdir -p debs x
(cd debs && apt-get download python3.11-doc postgresql-doc-15 rust-doc python-django-doc nodejs-doc libboost1.74-doc)
for deb in debs/*.deb; do
  name=$(basename "$deb" .deb)
  [ -d "x/$name" ] || { mkdir -p "x/$name" && dpkg-deb -x "$deb" "x/$name"; }
done
py=$(ls -d x/python3.11-doc_*/usr/share/doc/python3.11/html)
pg=$(ls -d x/postgresql-doc-15_*/usr/share/doc/postgresql-doc-15/html)
rs=$(ls -d x/rust-doc_*/usr/share/doc/rust-doc/html)
dj=$(ls -d x/python-django-doc_*/usr/share/doc/python-django-doc/html)
no=$(ls -d x/nodejs-doc_*/usr/share/doc/nodejs/api)
bo=$(ls -d x/libboost1.74-doc_*/usr/share/doc/libboost1.74-doc/doc/html)
three=("$py" https://docs.python.org/3.11/ "$pg" https://www.postgresql.org/docs/15/ "$rs" https://doc.rust-lang.org/1.63.0/)
node ../crawl-links.js "${three[@]}" > crawl-stream.txt
node ../crawl-links.js --fragments "${three[@]}" "$dj" https://docs.djangoproject.com/en/3.2/ \
  "$no" https://nodejs.org/docs/latest-v18.x/api/ "$bo" https://www.boost.org/doc/libs/1_74_0/doc/html/ > crawl-fragments.txt
wc -l crawl-stream.txt crawl-fragments.txt
