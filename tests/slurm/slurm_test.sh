#!/usr/bin/env bash
# Issue 24, part 5: ccnuma-run under srun on a single-node Slurm started here, from Debian's
# packages (slurmctld, slurmd, munge). Everything lives in a fresh directory: the configuration,
# the munge key and socket, the state, the spool and the logs, and the ports are free ones found
# now, so nothing else on the machine is touched and two runs in a row do not meet. Every daemon
# started here is stopped on exit, whatever happens.
#
# usage: slurm_test.sh CCNUMA_RUN [HYBRID_JACOBI]
# With the hybrid example (examples/03_hybrid_jacobi), it also runs as MPI ranks under
# srun --mpi=pmix, where this Slurm has the pmix plugin.
set -euo pipefail
ccnuma_run=$(readlink -f "${1:?usage: slurm_test.sh CCNUMA_RUN [HYBRID_JACOBI]}")
hybrid=${2:+$(readlink -f "$2")}

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v srun >/dev/null ||
  ! command -v munged >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "slurm_test: skipped: slurmctld, slurmd, srun or munged missing, and not root to install them" >&2
    exit 77
  fi
  echo "slurm_test: installing slurmctld slurmd slurm-client munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "slurm_test: skipped: slurmd must run as root (it starts the tasks as their users)" >&2
  exit 77
fi

dir=$(mktemp -d /tmp/ccnuma-slurm.XXXXXX)
chmod 711 "$dir"  # munged wants its socket directory searchable by all
pids=()
cleanup() {
  local rc=$?
  set +e  # nothing here may stop the daemons from being stopped
  # Let the last step finish before slurmd goes, then take along any slurmstepd of this Slurm
  # (slurmd starts them detached; they carry this SLURM_CONF in their environment).
  if [ -n "${SLURM_CONF:-}" ]; then
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  local steps=()
  for p in $(pgrep -x slurmstepd || true); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$dir/slurm.conf" && steps+=("$p")
  done
  pids=("${steps[@]}" "${pids[@]}")
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    for f in "$dir"/*.log; do [ -f "$f" ] && { echo "--- $f (last 20 lines)"; tail -n 20 "$f"; }; done
  fi
  [ -n "${KEEP_SLURM_DIR:-}" ] || rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free TCP ports (the kernel's choice, released just before the daemons take them).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

host=$(hostname -s)
# The node as slurmd itself sees it (hwloc, inside this process's cpuset and online CPUs), so
# that a container's cpuset, offline CPUs or a host without SMT never leave the node drained
# for a configuration slurmd disagrees with.
node_conf=$(slurmd -C | head -n 1)
conf_field() { echo "$node_conf" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
cpus=$(conf_field CPUs)
sockets=$(( $(conf_field Boards) * $(conf_field SocketsPerBoard) ))
cores_per_socket=$(conf_field CoresPerSocket)
threads=$(conf_field ThreadsPerCore)
cores=$((sockets * cores_per_socket))
[ -n "$cpus" ] && [ "$cores" -gt 0 ] || { echo "slurm_test: cannot read slurmd -C: $node_conf" >&2; exit 1; }

# munge with its own key and socket.
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge.key"
munged --foreground --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" >"$dir/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge.sock" ] || { echo "slurm_test: munged did not start" >&2; exit 1; }

mkdir -p "$dir/state" "$dir/spool"
cat >"$dir/slurm.conf" <<EOF
ClusterName=ccnuma
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$dir/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Sockets=$sockets CoresPerSocket=$cores_per_socket ThreadsPerCore=$threads State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
: >"$dir/plugstack.conf"
export SLURM_CONF="$dir/slurm.conf"
# Nothing of the caller's binding reaches the tasks (srun passes the environment on).
unset CCNUMA_TOPOLOGY CCNUMA_BIND CCNUMA_CPUSET CCNUMA_PAGE_FLAGS OMP_PLACES OMP_PROC_BIND OMP_NUM_THREADS \
  GOMP_CPU_AFFINITY KMP_AFFINITY
for v in $(env | grep -o '^SLURM_[A-Z_]*' || true); do [ "$v" = SLURM_CONF ] || unset "$v"; done

slurmctld -D -c -i -f "$SLURM_CONF" >"$dir/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$dir/slurmd.out.log" 2>&1 &
pids+=($!)
state=
for _ in $(seq 300); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || { echo "slurm_test: node $host is \"$state\", not idle, after 60 s" >&2; exit 1; }
echo "slurm_test: single-node Slurm up (ports $ctld_port/$slurmd_port, $cpus CPUs = $sockets x $cores_per_socket x $threads)"

fail=0
check() {  # check DESCRIPTION CONDITION...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}

# 1. Each task plans inside its own mask: the plan's PU is the CPU the task's mask holds, read
# independently from /proc/self/status inside the task.
ntasks=$((cores < cpus ? cores : cpus))
out=$(srun -n "$ntasks" -c 1 --cpu-bind=cores -l sh -c \
  'grep Cpus_allowed_list /proc/self/status; exec "$0" --bind 1,compact --print-plan --json' "$ccnuma_run")
echo "$out"
check "srun -n $ntasks -c 1 --cpu-bind=cores: one plan per task, on the task's own CPU" python3 -c '
import json, sys
tasks = {}
for line in sys.argv[1].splitlines():
    task, _, rest = line.partition(": ")
    t = tasks.setdefault(int(task), {})
    if rest.startswith("Cpus_allowed_list:"):
        t["allowed"] = rest.split(":", 1)[1].strip()
    elif rest.startswith("{"):
        t["plan"] = json.loads(rest)
n = int(sys.argv[2])
assert sorted(tasks) == list(range(n)), tasks
seen = set()
for i, t in sorted(tasks.items()):
    allowed = t["allowed"]
    assert "-" not in allowed and "," not in allowed, f"task {i}: mask {allowed} is not one CPU"
    pus = [th["pu"] for th in t["plan"]["threads"]]
    assert pus == [int(allowed)], f"task {i}: plan {pus}, mask {allowed}"
    seen.add(allowed)
assert len(seen) == n, f"tasks share CPUs: {seen}"
' "$out" "$ntasks"

# 2. A spec larger than the task is refused: one line per task, naming the allowed CPUs.
set +e
err=$(srun -n "$ntasks" -c 1 --cpu-bind=cores -l "$ccnuma_run" --bind 2,compact --print-plan --json 2>&1 >/dev/null)
rc=$?
set -e
echo "$err"
check "a spec larger than the task exits non-zero (srun exit $rc)" test "$rc" -ne 0
check "one refusal line per task, naming the task's own CPU" python3 -c '
import sys
allowed = {}
for line in sys.argv[3].splitlines():
    task, _, rest = line.partition(": ")
    if rest.startswith("Cpus_allowed_list:"):
        allowed[int(task)] = rest.split(":", 1)[1].strip()
lines = [l for l in sys.argv[1].splitlines() if "ccnuma-run:" in l]
n = int(sys.argv[2])
tasks = sorted(int(l.split(":", 1)[0]) for l in lines)
assert tasks == list(range(n)), lines
for l in lines:
    task = int(l.split(":", 1)[0])
    assert "\"2,compact\"" in l and f"allowed ({allowed[task]})" in l, l
' "$err" "$ntasks" "$out"

# 3. With no spec, the team is srun's -c; --show says what Slurm bound.
out=$(srun -n 1 -c "$cpus" --cpu-bind=cores "$ccnuma_run" --print-plan --json 2>/dev/null)
echo "$out"
check "srun -n 1 -c $cpus with no spec: a team of $cpus (SLURM_CPUS_PER_TASK)" python3 -c '
import json, sys
assert len(json.loads(sys.argv[1])["threads"]) == int(sys.argv[2]), sys.argv[1]' "$out" "$cpus"
out=$(srun -n 1 -c 1 --cpu-bind=cores --mem-bind=local "$ccnuma_run" --show)
echo "$out" | grep '^slurm:' || true
check "ccnuma-run --show under srun names Slurm's bindings" \
  sh -c 'echo "$1" | grep -q "^slurm: SLURM_CPU_BIND_TYPE=" && echo "$1" | grep -q "^slurm: SLURM_MEM_BIND_TYPE=local"' _ "$out"

# 4. What srun can launch MPI with here, and the hybrid example as MPI ranks through PMIx.
mpi_list=$(srun --mpi=list 2>&1 || true)
echo "srun --mpi=list:"
echo "$mpi_list" | sed 's/^/  /'
if [ -n "$hybrid" ]; then
  if echo "$mpi_list" | grep -qw pmix; then
    set +e
    out=$(timeout 120 srun --mpi=pmix -n "$ntasks" -c 1 --cpu-bind=cores "$ccnuma_run" --bind 1,compact -- \
      "$hybrid" 64 64 10 2>&1)
    rc=$?
    set -e
    echo "$out"
    check "the hybrid example under srun --mpi=pmix: $ntasks ranks, validated (exit $rc)" \
      sh -c '[ "$1" -eq 0 ] && echo "$2" | grep -q "^validated: " && echo "$2" | grep -q " $3 ranks, "' _ "$rc" "$out" "$ntasks"
  else
    echo "note: this Slurm has no pmix plugin, so the hybrid example is not run under srun"
  fi
fi

exit "$fail"
