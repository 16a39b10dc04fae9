#!/usr/bin/env bash
# Brings up deploy/compose.yaml as far as this machine allows and checks it (docs/deploy.md,
# "Checking the compose file"): builds the image, PostgreSQL (the official image, or a stand-in
# built from Debian's packages when no registry can be reached), the simulator serving its
# workspaces, `fleet apply`, the two workers, each worker's fleet page, /healthz and /metrics,
# every workspace synced at least once, and no API key in any log.
# Needs a Docker engine and the node base image, and `docker compose` or `docker-compose`.
# Exit 0: every part checked. Exit 3: the image has no `wsmirror fleet` command yet, so only
# PostgreSQL and the simulator were checked (said clearly). Exit 1: a check failed.
# Usage: npm run compose:check   (env IMAGE_TIMEOUT, SYNC_TIMEOUT in seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
project="wsmirror-check-$$"
file=deploy/compose.yaml
work=$(mktemp -d)
say() { echo "compose:check: $*"; }
fail() {
  say "FAILED: $*"
  [ -n "${compose:-}" ] && $compose logs --no-color --tail 30 >&2 2>&1 || true
  exit 1
}
if docker compose version >/dev/null 2>&1; then compose_bin="docker compose"
elif command -v docker-compose >/dev/null 2>&1; then compose_bin="docker-compose"
else fail "neither \`docker compose\` nor \`docker-compose\` is installed (Debian: apt-get install docker-compose)"; fi
docker info >/dev/null 2>&1 || fail "no Docker engine answers; start one first"
cleanup() {
  [ -n "${compose:-}" ] && $compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
http_status() { node -e "fetch(process.argv[1],{headers:process.argv[2]?{authorization:'Bearer '+process.argv[2]}:{}}).then(r=>console.log(r.status),()=>console.log(0))" "$1" "${2:-}"; }
wait_for() { # wait_for <seconds> <description> <command...>
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 2))); do "$@" && return 0; sleep 0.5; done
  fail "timed out after ${limit} s waiting for $what"
}
started=$(date +%s)

# Host networking: the compose file's ports are the host's, and must be free.
for port in 55432 4010 9464 9465; do
  node -e "const s=require('net').createServer();s.once('error',()=>process.exit(1));s.listen($port,'127.0.0.1',()=>s.close())" ||
    fail "port $port on 127.0.0.1 is taken; the compose file needs it (host networking)"
done

say "building wsmirror:local (docker build --network host)"
docker build --network host -q -t wsmirror:local . >/dev/null || fail "docker build failed"

# PostgreSQL: the official image when it is here or can be pulled, else a stand-in from Debian's packages.
pg_image=postgres:15-bookworm
if ! docker image inspect "$pg_image" >/dev/null 2>&1 && ! timeout "${IMAGE_TIMEOUT:-30}" docker pull -q "$pg_image" >/dev/null 2>&1; then
  say "no $pg_image from a registry: building wsmirror-postgres-standin:15 from Debian's postgresql-15"
  pg_image=wsmirror-postgres-standin:15
  docker build --network host -q -t "$pg_image" scripts/postgres-standin >/dev/null || fail "the PostgreSQL stand-in did not build"
fi
export WSMIRROR_POSTGRES_IMAGE=$pg_image
WSMIRROR_PG_PASSWORD=$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")
export WSMIRROR_PG_PASSWORD
compose="$compose_bin -p $project -f $file"

# `wsmirror fleet --help` exits 0 even where there is no fleet command (the program's help answers), so read the list.
fleet=no
help=$(docker run --rm --network host wsmirror:local --help 2>&1) || fail "wsmirror --help failed in the image"
grep -q '^  fleet ' <<<"$help" && fleet=yes
if [ "$fleet" = no ]; then
  say "this build has no \`wsmirror fleet\` command: checking PostgreSQL and the simulator only (not migrate, not the workers)"
  $compose up -d --no-build postgres simulator >/dev/null 2>&1 || fail "compose up (postgres, simulator) failed"
else
  $compose up -d --no-build >/dev/null 2>&1 || fail "compose up failed"
fi
healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$($compose ps -q "$1")" 2>/dev/null)" = healthy ]; }
wait_for 120 "PostgreSQL healthy" healthy postgres
wait_for 60 "the simulator healthy" healthy simulator
# The workers connect over TCP with the password from PGPASSWORD, as the fleet file's URL has none.
docker exec -e PGPASSWORD="$WSMIRROR_PG_PASSWORD" "$($compose ps -q postgres)" \
  psql -h 127.0.0.1 -p 55432 -U wsmirror -d wsmirror -tAc 'select 1' >/dev/null 2>&1 || fail "PostgreSQL refused the password over TCP"
docker exec -e PGPASSWORD=wrong "$($compose ps -q postgres)" \
  psql -h 127.0.0.1 -p 55432 -U wsmirror -d wsmirror -tAc 'select 1' >/dev/null 2>&1 && fail "PostgreSQL accepted a wrong password"
say "PostgreSQL ($pg_image) and the simulator are healthy; PostgreSQL takes the password over TCP and refuses a wrong one"

# Each workspace of the simulator answers its own key at its own prefix, and refuses another's.
keys=()
for id in $(node -e "for (const w of require('./deploy/simulator-workspaces.json').workspaces) console.log(w.id)"); do
  key=$(tr -d '\n' <"deploy/secrets/$id.key")
  keys+=("$key")
  [ "$(http_status "http://127.0.0.1:4010/w/$id/api/v1/pipelines" "$key")" = 200 ] || fail "workspace $id did not answer its key"
  [ "$(http_status "http://127.0.0.1:4010/w/$id/api/v1/pipelines" wrong-key)" = 401 ] || fail "workspace $id accepted a wrong key"
done
say "the simulator serves ${#keys[@]} workspaces, each with its own key"

if [ "$fleet" = no ]; then
  say "INCOMPLETE: migrate and the two workers were not run (no fleet command); PostgreSQL and the simulator passed in $(($(date +%s) - started)) s"
  exit 3
fi

exited() { [ "$(docker inspect -f '{{.State.Status}}' "$($compose ps -q migrate)")" = exited ]; }
wait_for 120 "fleet apply to finish" exited
[ "$(docker inspect -f '{{.State.ExitCode}}' "$($compose ps -q migrate)")" = 0 ] || fail "fleet apply exited non-zero"
say "fleet apply exited 0"
for svc in worker-a worker-b; do wait_for 120 "$svc healthy" healthy "$svc"; done
for port in 9464 9465; do
  for path in / /healthz /metrics; do
    status=$(http_status "http://127.0.0.1:$port$path")
    [ "$status" = 200 ] || fail "worker on $port: $path answered $status"
  done
  node -e "fetch('http://127.0.0.1:$port/').then(r=>r.text()).then(t=>process.exit(['acme','globex','initech'].every(id=>t.includes(id))?0:1))" ||
    fail "the fleet page on $port does not list every workspace"
done
say "both workers healthy; each fleet page lists every workspace; /healthz and /metrics answer 200"

synced() { node -e "fetch('http://127.0.0.1:9464/fleet.json').then(r=>r.json()).then(s=>process.exit(s.workspaces.length>=3&&s.workspaces.every(w=>w.lastSuccessAt)?0:1),()=>process.exit(1))"; }
wait_for "${SYNC_TIMEOUT:-240}" "every workspace to sync once" synced
say "every workspace has synced"

$compose logs --no-color >"$work/logs" 2>&1
for key in "${keys[@]}" "$WSMIRROR_PG_PASSWORD"; do
  grep -qF -- "$key" "$work/logs" && fail "a key or the database password appears in the logs"
done
say "no key or password in any log"
say "passed in $(($(date +%s) - started)) s"
