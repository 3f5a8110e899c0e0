#!/usr/bin/env bash
# Start a one-node SLURM cluster on localhost (Debian's slurm 22.05 + munge), for CI.
#
#   .ci/slurm/start-cluster.sh STATE_DIR
#
# Installs slurmctld, slurmd, slurm-client and munge with apt when they are missing (root only),
# writes /etc/slurm/slurm.conf (one node `localhost`, no accounting, no cgroups, a fake GPU),
# starts munged (unless one already answers), slurmctld and `slurmd -N localhost`, each in the
# foreground of a background process, records their PIDs in STATE_DIR/pids (one "name pid" per
# line; .ci/slurm/stop-cluster.sh STATE_DIR stops exactly these), and waits until `sinfo` shows
# the node idle. Daemon logs: STATE_DIR/log/.
#
# Exit status: 0 = the cluster is up; anything else = it could not be set up (the message says
# why; the caller reports the SLURM step as SKIPPED). Whatever it started before failing is
# listed in STATE_DIR/pids, so the caller's stop-cluster.sh still stops it.
set -uo pipefail

state="${1:?usage: start-cluster.sh STATE_DIR}"
mkdir -p "$state/log" "$state/ctld" "$state/d"
state="$(cd "$state" && pwd)"
pids="$state/pids"
: >>"$pids"
conf=/etc/slurm/slurm.conf
marker="# written by jspgfn .ci/slurm/start-cluster.sh"

say() { echo "slurm-setup: $*"; }
fail() { echo "slurm-setup: CANNOT SET UP SLURM: $*" >&2; echo "$*" >"$state/reason"; exit 3; }
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }
t0=$(date +%s)

[[ $(uname -s) == Linux ]] || fail "not Linux"
[[ $(id -u) -eq 0 ]] || fail "not root (installing packages and starting the daemons need root)"

# ---------------------------------------------------------------- packages
need=()
for cmd in slurmctld slurmd sbatch squeue sinfo scancel munged munge; do
    command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
export PATH="$PATH:/usr/sbin:/sbin"
if ((${#need[@]})); then
    command -v apt-get >/dev/null 2>&1 || fail "missing ${need[*]} and no apt-get to install them"
    say "installing slurmctld slurmd slurm-client munge with apt-get (missing: ${need[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >"$state/log/apt.log" 2>&1 || { tail -5 "$state/log/apt.log" >&2; fail "apt-get update failed"; }
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >>"$state/log/apt.log" 2>&1 \
        || { tail -5 "$state/log/apt.log" >&2; fail "apt-get install failed"; }
    say "packages installed ($(elapsed))"
fi
say "$(slurmctld -V 2>/dev/null || echo 'slurmctld: version unknown')"

# ---------------------------------------------------------------- refuse to disturb a real setup
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    fail "a slurmctld or slurmd is already running on this machine (not started by this script): leaving it alone"
fi
if [[ -e $conf ]] && ! grep -qF "$marker" "$conf"; then
    fail "$conf exists and was not written by this script: not overwriting a real cluster's configuration"
fi

# ---------------------------------------------------------------- munge
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if munge_ok; then
    say "munged already running: using it (not stopping it at the end)"
else
    key=/etc/munge/munge.key
    mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    if [[ ! -s $key ]]; then
        if command -v mungekey >/dev/null 2>&1; then
            mungekey --create --keyfile="$key" >/dev/null 2>&1 || dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
        else
            dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
        fi
    fi
    chown munge:munge /etc/munge "$key" /run/munge /var/lib/munge /var/log/munge 2>/dev/null
    chmod 0700 /etc/munge; chmod 0400 "$key"; chmod 0755 /run/munge
    # setpriv execs munged itself, so $! is munged's PID (runuser/su would sit in between).
    setpriv --reuid=munge --regid=munge --init-groups munged --foreground >"$state/log/munged.log" 2>&1 &
    echo "munged $!" >>"$pids"
    for _ in $(seq 50); do munge_ok && break; sleep 0.2; done
    munge_ok || { tail -5 "$state/log/munged.log" >&2; fail "munged did not start"; }
    say "munged started (pid $!)"
fi

# ---------------------------------------------------------------- slurm.conf
# The node offers 4 SLURM CPUs per real one: smoke jobs last seconds and mostly wait (for sbatch, the
# status query, Python's start), so overlapping 4x as many of them cuts the run's wall time. Their
# numbers do not depend on it (CI compares them with a local run's). config_overrides: slurmd keeps
# the configured count instead of draining a node that claims more CPUs than it has.
cpus=$(( 4 * $(nproc) ))
mem_mb=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
mkdir -p /etc/slurm
cat >"$conf" <<EOF
$marker
# A one-node test cluster on localhost. Removed by .ci/slurm/stop-cluster.sh.
ClusterName=jspgfnci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no systemd, no cgroups
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
# no accounting: the profile queries job states with squeue, which needs finished jobs to stay
# visible for a while (MinJobAge, seconds)
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
# a fake GPU (no device behind it) so that rules asking for gpu=1 can be scheduled
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
cat >/etc/slurm/gres.conf <<EOF
$marker
NodeName=localhost Name=gpu File=/dev/null
EOF
say "wrote $conf (CPUs=$cpus RealMemory=$mem_mb MB, partition debug, fake gpu:1)"

# ---------------------------------------------------------------- daemons
slurmctld -D -i >"$state/log/slurmctld.out" 2>&1 &
echo "slurmctld $!" >>"$pids"
ctld=$!
for _ in $(seq 60); do scontrol ping 2>/dev/null | grep -q UP && break; kill -0 "$ctld" 2>/dev/null || break; sleep 0.5; done
scontrol ping 2>/dev/null | grep -q UP \
    || { tail -15 "$state/log/slurmctld.log" "$state/log/slurmctld.out" >&2 2>/dev/null; fail "slurmctld did not start"; }
say "slurmctld started (pid $ctld)"

slurmd -D -N localhost >"$state/log/slurmd.out" 2>&1 &
echo "slurmd $!" >>"$pids"
sd=$!
state_now=""
for _ in $(seq 120); do
    state_now=$(sinfo -h -N -n localhost -o %t 2>/dev/null | head -n 1)
    [[ $state_now == idle ]] && break
    kill -0 "$sd" 2>/dev/null || break
    sleep 0.5
done
if [[ $state_now != idle ]]; then
    tail -15 "$state/log/slurmd.log" "$state/log/slurmd.out" >&2 2>/dev/null
    sinfo -N -l >&2 2>/dev/null
    fail "the node did not become idle (state: '${state_now:-none}')"
fi
say "slurmd started (pid $sd); sinfo: node localhost idle; cluster up in $(elapsed)"
sinfo
exit 0
