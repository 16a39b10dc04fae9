#!/usr/bin/env bash
# Proves the production image end to end (docs/operations.md, "The container"): builds it, then runs
# it against the bundled simulator on the host. Host networking only (`--network host`): no bridge,
# no address but loopback. Needs a Docker engine and the base image (pulled, or made locally by the
# CI's offline-node-base.sh). Usage: npm run container:check   (env IMAGE to name the image)
set -euo pipefail
cd "$(dirname "$0")/.."
image=${IMAGE:-wsmirror:check}
run_id="wsmirror-check-$$"
volume="$run_id-data"
work=$(mktemp -d)
sim_pid=""
say() { echo "container:check: $*"; }
fail() { say "FAILED: $*"; [ -n "${container:-}" ] && docker logs "$container" 2>&1 | tail -20; exit 1; }
cleanup() {
  docker rm -f "$run_id-a" "$run_id-b" "$run_id-key" >/dev/null 2>&1 || true
  docker volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
http_status() { node -e "fetch(process.argv[1]).then(r=>console.log(r.status),()=>console.log(0))" "$1"; }
wait_for() { # wait_for <seconds> <description> <command...>
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 4))); do "$@" && return 0; sleep 0.25; done
  fail "timed out after ${limit} s waiting for $what"
}

started=$(date +%s)
# The simulator runs on the host from this checkout: it needs the dependencies and the build.
[ -d node_modules ] || fail "run npm ci first (the host simulator needs the dependencies)"
[ -f dist/src/cli/main.js ] || npm run build >/dev/null
say "building $image (docker build --network host)"
docker build --network host -q -t "$image" . >/dev/null
say "built in $(( $(date +%s) - started )) s; image size $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"

[ "$(docker image inspect -f '{{.Config.User}}' "$image")" = node ] || fail "the image does not set USER node"
[ "$(docker run --rm --network host --entrypoint id "$image" -u)" != 0 ] || fail "the container runs as root"
help=$(docker run --rm --network host "$image" --help) || fail "--help exited non-zero"
grep -q '^  run ' <<<"$help" || fail "--help does not list the run command"
say "non-root (uid $(docker run --rm --network host --entrypoint id "$image" -u)); --help works"

# The simulator on the host, with live activity so each cycle has something to do.
sim_port=$(free_port)
node bin/wsmirror.js simulate --host 127.0.0.1 --port "$sim_port" --api-key check-key --tickets 300 --deals 40 --activity 5 >"$work/sim.log" 2>&1 &
sim_pid=$!
wait_for 20 "the simulator" sh -c "[ \"\$(node -e \"fetch('http://127.0.0.1:$sim_port/api/v1/events?limit=1',{headers:{authorization:'Bearer check-key'}}).then(r=>console.log(r.status),()=>console.log(0))\")\" = 200 ]"

http_port=$(free_port)
cat >"$work/wsmirror.json" <<JSON
{ "schedule": "*/2 * * * * *", "maxRequestsPerSecond": 200, "http": { "host": "127.0.0.1", "port": $http_port } }
JSON
chmod 0644 "$work/wsmirror.json"
docker volume create "$volume" >/dev/null
start() { # start <name> <api key>
  docker run -d --name "$1" --network host -v "$volume:/data" -v "$work/wsmirror.json:/config/wsmirror.json:ro" \
    -e WSMIRROR_CONFIG=/config/wsmirror.json -e WSMIRROR_BASE_URL="http://127.0.0.1:$sim_port" -e WSMIRROR_API_KEY="$2" \
    -e WSMIRROR_HTTP_PORT="$http_port" -e WSMIRROR_HTTP_HOST=127.0.0.1 \
    --health-interval 1s --health-start-period 60s --health-retries 3 "$image" run >/dev/null
}
cycles() { docker logs "$1" 2>&1 | grep -c '"msg":"sync cycle"' || true; }
# The whole log first, then grep: under pipefail, `docker logs | grep -q` fails whenever grep stops
# at its match before docker logs has written everything (SIGPIPE), which made the check flaky.
logged() { # logged <container> <fixed string>
  local out
  out=$(docker logs "$1" 2>&1)
  grep -qF -- "$2" <<<"$out"
}

container="$run_id-a"
start "$container" check-key
wait_for 120 "the first sync cycle after the backfill" sh -c "[ \$(docker logs $container 2>&1 | grep -c '\"msg\":\"sync cycle\"') -ge 2 ]"
logged "$container" 'backfilling first' || fail "the first start did not backfill"
say "backfilled and cycling ($(cycles "$container") cycles)"
wait_for 60 "HEALTHCHECK healthy" sh -c "[ \"\$(docker inspect -f '{{.State.Health.Status}}' $container)\" = healthy ]"
for path in healthz readyz metrics; do
  status=$(http_status "http://127.0.0.1:$http_port/$path")
  [ "$status" = 200 ] || fail "/$path answered $status"
done
node -e "fetch('http://127.0.0.1:$http_port/metrics').then(r=>r.text()).then(t=>process.exit(/^wsmirror_requests_total\{endpoint=\"tickets\",status_class=\"2xx\"\} [1-9]/m.test(t)&&/^wsmirror_is_writer 1$/m.test(t)?0:1))" || fail "/metrics lacks request counts or the writer flag"
say "HEALTHCHECK healthy; /healthz, /readyz and /metrics answer 200"
modes=$(docker run --rm --network host -v "$volume:/data" --entrypoint stat "$image" -c '%a %U %n' /data/mirror.sqlite /data/mirror.sqlite.lock)
grep -qv '^600 node' <<<"$modes" && fail "mirror files are not 0600 node: $modes"

t0=$(date +%s%N)
docker stop -t 10 "$container" >/dev/null
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
code=$(docker inspect -f '{{.State.ExitCode}}' "$container")
[ "$code" = 0 ] || fail "docker stop: exit code $code"
[ "$elapsed_ms" -lt 10000 ] || fail "docker stop took $elapsed_ms ms"
say "docker stop: exit 0 in $elapsed_ms ms"

# A new container on the same volume resumes: no second backfill.
docker rm "$container" >/dev/null
container="$run_id-b"
start "$container" check-key
wait_for 60 "a sync cycle after the restart" sh -c "[ \$(docker logs $container 2>&1 | grep -c '\"msg\":\"sync cycle\"') -ge 1 ]"
logged "$container" 'backfilling first' && fail "the restarted container backfilled again"
docker stop -t 10 "$container" >/dev/null
[ "$(docker inspect -f '{{.State.ExitCode}}' "$container")" = 0 ] || fail "second docker stop: non-zero exit"
say "the volume survived a restart; the next start resumed without a backfill"

# A wrong key: exit 3, one sentence on stderr, the key nowhere in the log.
container="$run_id-key"
docker run --name "$container" --network host -v "$volume:/data" -e WSMIRROR_BASE_URL="http://127.0.0.1:$sim_port" \
  -e WSMIRROR_API_KEY=wrong-key-123 -e WSMIRROR_HTTP_PORT=0 "$image" run >"$work/key.out" 2>"$work/key.err" && code=0 || code=$?
[ "$code" = 3 ] || fail "a wrong key exited $code, not 3"
lines=$(grep -c '^wsmirror: ' "$work/key.err" || true)
[ "$lines" = 1 ] || fail "a wrong key printed $lines error sentences: $(cat "$work/key.err")"
grep -q 'wrong-key-123' "$work/key.err" "$work/key.out" && fail "the key appears in the log"
say "a wrong key exits 3: $(grep '^wsmirror: ' "$work/key.err")"
say "passed in $(( $(date +%s) - started )) s"
