#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the cluster tests (tests/cluster/):
#   tests/cluster/slurm.sh start   install the Debian packages where absent, write the
#                                  configuration, start MariaDB, munge, slurmdbd,
#                                  slurmctld and slurmd; wait until the node is idle
#                                  and sacct answers; print `export SLURM_CONF=...`
#   tests/cluster/slurm.sh stop    stop every daemon it started, by the pids it recorded
#   tests/cluster/slurm.sh run CMD start, run CMD with SLURM_CONF set, stop (whatever CMD
#                                  did). If the start fails, CI=true fails here; elsewhere
#                                  CMD runs with CONFLICTLAB_SLURM_UNAVAILABLE=<why>, and the
#                                  cluster tests skip with that reason (tests/cluster/conftest.py).
# Runs as root (the daemons run as root too: a throwaway test cluster). All state
# (configuration, spool, logs, database, pid files) lives in one folder (munged's
# socket excepted: /run/munge/munge.socket.2, where SLURM's clients look for it),
# $CONFLICTLAB_SLURM_DIR (default: $TMPDIR/conflictlab-slurm), removed by `stop`.
# Ports: 16817-16819 (slurmctld, slurmd, slurmdbd) and 13306 (MariaDB), all on 127.0.0.1,
# so a cluster the machine may already run is left alone.
#
# No GPU exists here, so the node declares two GPUs whose "device files" are plain files
# (gres.conf): sbatch --gpus=N is accepted, scheduled and accounted (sacct: gres/gpu=N)
# as on a GPU node, but no device is behind it and CUDA_VISIBLE_DEVICES stays empty. The `gpu`
# partition holds the same node; a job lands there because its gpu resource makes the
# plugin pick it (profiles/slurm/partitions.yaml).
set -euo pipefail

STATE=${CONFLICTLAB_SLURM_DIR:-${TMPDIR:-/tmp}/conflictlab-slurm}
NODE=$(hostname -s)
MUNGE_SOCKET=/run/munge/munge.socket.2
# The jobstep plugin drops SLURM_CONF (with every SLURM_* variable but the job's identity) from
# the environment of the srun it starts inside each job, so that srun finds the configuration
# only at the packages' default path: a link from there to this cluster's file.
DEFAULT_CONF=/etc/slurm/slurm.conf
PACKAGES=(slurmctld slurmd slurmdbd slurm-client munge mariadb-server)
DAEMONS=(slurmd slurmctld slurmdbd munged mariadbd)  # stop order: the reverse of start

log() { echo "slurm.sh: $*" >&2; }

install_packages() {
    local missing=()
    for package in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if ((${#missing[@]})); then
        log "installing ${missing[*]}"
        apt-get update -q
        # policy-rc.d (or no init) keeps the packaged services from starting: we start our own.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
}

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every second until it succeeds.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    for ((i = 0; i < seconds; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    log "timed out after ${seconds}s waiting for $what; logs in $STATE/log"
    tail -n 20 "$STATE"/log/*.log >&2 || true
    return 1
}

write_config() {
    local cpus mem_mb
    cpus=$(nproc)
    # RealMemory below the machine's total: slurmd refuses a node that claims more than it has.
    mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
    mkdir -p "$STATE"/{dev,etc,log,run,spool/ctld,spool/d,munge,mysql}
    chmod 700 "$STATE" "$STATE/munge"
    cat >"$STATE/etc/slurm.conf" <<CONF
ClusterName=conflictlab
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/spool/ctld
SlurmdSpoolDir=$STATE/spool/d
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
# No cgroups in a container: track processes by parent pid, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=10
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=16819
AccountingStorageTRES=gres/gpu
# the plugin's --comment (rule and wildcards) in sacct, so a test can tell the jobs apart
AccountingStoreFlags=job_comment
# Short timers, so that a killed or finished job is seen within seconds.
MinJobAge=300
KillWait=5
OverTimeLimit=0
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
ReturnToService=2
SchedulerType=sched/backfill
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:2 State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE MaxTime=INFINITE State=UP
CONF
    cat >"$STATE/etc/gres.conf" <<CONF
NodeName=$NODE Name=gpu File=$STATE/dev/gpu[0-1]
CONF
    # slurmd drops a GPU without a device file; plain files stand in (task/none binds nothing)
    touch "$STATE"/dev/gpu{0,1}
    cat >"$STATE/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=16819
SlurmUser=root
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=13306
StorageUser=slurm
StoragePass=conflictlab
StorageLoc=slurm_acct_db
CONF
    chmod 600 "$STATE/etc/slurmdbd.conf"
    # a fresh key for this cluster only
    dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$STATE/munge/munge.key"
}

start_mariadb() {
    mariadb-install-db --no-defaults --user=root --datadir="$STATE/mysql" --auth-root-authentication-method=socket \
        >"$STATE/log/mariadb-install.log" 2>&1
    mariadbd --no-defaults --user=root --datadir="$STATE/mysql" --socket="$STATE/run/mysql.sock" \
        --pid-file="$STATE/run/mariadbd.pid" --port=13306 --bind-address=127.0.0.1 \
        --innodb-buffer-pool-size=64M --log-error="$STATE/log/mariadbd.log" >/dev/null 2>&1 &
    echo $! >"$STATE/run/mariadbd.pid"
    wait_for 60 MariaDB mariadb --no-defaults --socket="$STATE/run/mysql.sock" -e "SELECT 1"
    mariadb --no-defaults --socket="$STATE/run/mysql.sock" -e "
        CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'conflictlab';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
}

start() {
    if [[ -f $STATE/run/slurmctld.pid ]]; then
        log "a cluster seems to run already ($STATE); run stop first"
        return 1
    fi
    # a start that fails half-way stops what it had started
    trap 'stop; exit 1' ERR
    install_packages
    if [[ -e $DEFAULT_CONF || -L $DEFAULT_CONF ]]; then
        log "$DEFAULT_CONF exists (this machine's own SLURM, or a test cluster still running); not touching it"
        return 1
    fi
    for port in 16817 16818 16819 13306; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            log "port $port on 127.0.0.1 is taken (a cluster left running?); not starting"
            return 1
        fi
    done
    write_config
    ln -s "$STATE/etc/slurm.conf" "$DEFAULT_CONF"
    start_mariadb
    # munged listens on the packages' default socket: SLURM 22.05's clients (sacctmgr
    # talking to slurmdbd) ignore AuthInfo=socket=. --force: munged refuses to run as root otherwise.
    if [[ -S $MUNGE_SOCKET ]] && munge --socket="$MUNGE_SOCKET" -n >/dev/null 2>&1; then
        log "a munged already answers on $MUNGE_SOCKET; stop it first"
        return 1
    fi
    mkdir -p "$(dirname "$MUNGE_SOCKET")"
    munged --force --key-file="$STATE/munge/munge.key" --socket="$MUNGE_SOCKET" \
        --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/seed"
    wait_for 20 munge munge --socket="$MUNGE_SOCKET" -n
    export SLURM_CONF=$STATE/etc/slurm.conf
    slurmdbd  # reads slurmdbd.conf beside $SLURM_CONF; daemonises, writes its pid file
    wait_for 60 slurmdbd bash -c "exec 3<>/dev/tcp/127.0.0.1/16819"
    # the cluster and an account for the tests (the profile's slurm_account)
    sacctmgr -i add cluster conflictlab >/dev/null
    sacctmgr -i add account conflictlab Cluster=conflictlab >/dev/null
    sacctmgr -i add user root Account=conflictlab >/dev/null
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    wait_for 90 "node $NODE idle" bash -c "sinfo -h -N -n $NODE -o %T | grep -qx idle"
    wait_for 60 sacct sacct -n -X -S now-1minute
    log "cluster up: $(sinfo -h -o '%P %D %c %m %G %T' | tr '\n' ';')"
    trap - ERR
    echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
    local pid
    for daemon in "${DAEMONS[@]}"; do
        pid=$(cat "$STATE/run/$daemon.pid" 2>/dev/null || true)
        if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then
            for ((i = 0; i < 30; i++)); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 1
            done
            if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" || true; fi
        fi
        rm -f "$STATE/run/$daemon.pid"
    done
    if [[ $(readlink "$DEFAULT_CONF" 2>/dev/null) == "$STATE/etc/slurm.conf" ]]; then rm -f "$DEFAULT_CONF"; fi
    rm -rf "$STATE"
}

run() {
    local status=0 why
    # a process of its own: `set -e` and the ERR trap do not act inside an `if` or `||`
    "$0" start >/dev/null 2>"$STATE.start.log" || status=$?
    cat "$STATE.start.log" >&2
    why=$(tail -n 1 "$STATE.start.log")
    rm -f "$STATE.start.log"
    if ((status == 0)); then
        export SLURM_CONF=$STATE/etc/slurm.conf
        trap stop EXIT
    elif [[ ${CI:-} == true ]]; then
        log "the cluster did not start (CI=true: that fails the run)"
        return 1
    else
        CONFLICTLAB_SLURM_UNAVAILABLE="the one-node SLURM cluster did not start ($0 start: $why)"
        export CONFLICTLAB_SLURM_UNAVAILABLE
    fi
    "$@"
}

case ${1:-} in
start) start ;;
stop) stop ;;
run)
    shift
    run "$@"
    ;;
*)
    echo "usage: $0 start|stop|run CMD..." >&2
    exit 2
    ;;
esac
