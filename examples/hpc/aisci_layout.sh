# Shared layout arithmetic of the USER-AISCI batch scripts (examples/hpc/*.slurm, *.pbs).
#
# Sourced by every job script:
#
#   . "$AISCI_HPC_DIR/aisci_layout.sh"
#   aisci_init "$@"                  # allocation, --dry-run, input file, extra LAMMPS args
#   aisci_plan pimd                  # checks + rank map (pimd, nn, pimd_nn, dplr)
#   aisci_launch                     # prints the map; runs mpiexec unless a dry run
#
# Executed (not sourced) as the per-rank wrapper that mpiexec starts on every rank:
#
#   bash aisci_layout.sh --rank-exec GPUS_PER_NODE THREADS -- lmp-aisci ARGS...
#
# which reads the node-local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, ...),
# appends `-var device cuda:N` (N = local rank % GPUS_PER_NODE; `-var device cpu` without
# GPUs), prints one line "aisci_layout: rank R ..." with its host, device and the cores
# it may run on, and execs LAMMPS.
#
# Where the numbers come from, first match wins:
#   1. AISCI_NODES, AISCI_TASKS_PER_NODE, AISCI_CPUS_PER_TASK, AISCI_GPUS_PER_NODE,
#      AISCI_CORES_PER_NODE (what-if dry runs, or a scheduler this file does not know);
#   2. the scheduler's environment inside a job (Slurm: SLURM_JOB_NUM_NODES, SLURM_NTASKS,
#      SLURM_CPUS_PER_TASK, SLURM_CPUS_ON_NODE, SLURM_GPUS_ON_NODE; PBS: PBS_NODEFILE,
#      NCPUS, OMP_NUM_THREADS);
#   3. the #SBATCH / #PBS lines of the job script itself (a dry run outside a job).
# Input: the job script's first argument, else AISCI_INPUT; further LAMMPS arguments after
# it, or in AISCI_LMP_ARGS (for qsub, which passes none: qsub -v AISCI_INPUT=...).
# Layout knobs: AISCI_BEADS (P), AISCI_BEADS_PER_WORLD (K), AISCI_THREADS (libtorch
# threads per rank), AISCI_OVERSUBSCRIBE=1 (more ranks x threads than cores: no binding,
# ranks yield while waiting; for tests and laptops), AISCI_DRY_RUN=1 (or --dry-run); these
# two flags take 0 or 1 only (aisci_flag). Before launching, and in a dry run, the launcher,
# the input and the data and model files it names must exist (aisci_check_files).
# Tools: AISCI_LMP (default <repo>/build/bin/lmp-aisci), AISCI_MPIEXEC (default mpiexec).

AISCI_HPC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

aisci_die() {
  echo "aisci_layout: ERROR: $*" >&2
  exit 2
}

aisci_is_count() {  # a positive integer
  [[ "$1" =~ ^[1-9][0-9]*$ ]]
}

# aisci_flag NAME: the on/off variable NAME read strictly: unset or empty -> 0, "0" or "1"
# as given; anything else ("yes", "true", "2") stops with exit 2 naming it.
aisci_flag() {
  local v=${!1:-0}
  [ "$v" = 0 ] || [ "$v" = 1 ] || aisci_die "$1 must be 0 or 1, got '$v'"
  echo "$v"
}

# ---- per-rank wrapper ------------------------------------------------------------------

aisci_local_rank() {
  local v
  for v in OMPI_COMM_WORLD_LOCAL_RANK SLURM_LOCALID MPI_LOCALRANKID PMI_LOCAL_RANK PALS_LOCAL_RANKID; do
    if [ -n "${!v:-}" ]; then echo "${!v}"; return 0; fi
  done
  return 1
}

aisci_world_rank() {
  local v
  for v in OMPI_COMM_WORLD_RANK SLURM_PROCID PMI_RANK PALS_RANKID; do
    if [ -n "${!v:-}" ]; then echo "${!v}"; return 0; fi
  done
  echo "?"
}

# GPU of a node-local rank: ranks of one node take the node's GPUs round-robin.
aisci_gpu_of_local() {
  echo $(( $1 % $2 ))
}

aisci_rank_exec() {
  local gpus=$1 threads=$2 local_rank device cores
  shift 2
  if [ "${1:-}" = "--" ]; then shift; fi
  if ! local_rank=$(aisci_local_rank); then
    echo "aisci_layout: ERROR: no node-local rank in the environment (OMPI_COMM_WORLD_LOCAL_RANK," \
         "SLURM_LOCALID, MPI_LOCALRANKID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID): start this" \
         "wrapper with mpiexec or srun" >&2
    exit 2
  fi
  if [ "$gpus" -gt 0 ]; then
    device="cuda:$(aisci_gpu_of_local "$local_rank" "$gpus")"
  else
    device=cpu
  fi
  cores=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status 2>/dev/null)
  echo "aisci_layout: rank $(aisci_world_rank) on $(hostname -s) local $local_rank -> device" \
       "$device, threads $threads, cores ${cores:-?}" >&2
  export OMP_NUM_THREADS=$threads
  exec "$@" -var device "$device" -var threads "$threads"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  [ "${1:-}" = "--rank-exec" ] || aisci_die "source this file from a job script, or run it as" \
    "'$0 --rank-exec GPUS_PER_NODE THREADS -- COMMAND...'"
  shift
  aisci_rank_exec "$@"
fi

# ---- allocation -------------------------------------------------------------------------

# Value of a job-script directive such as --nodes=2 or -l select=2:ncpus=8 (dry runs
# outside a job). $1 = script, $2 = Slurm long option or PBS resource name.
aisci_sbatch_opt() {
  sed -n 's/^#SBATCH[[:space:]]\{1,\}--'"$2"'[= ]\([^[:space:]]*\).*/\1/p' "$1" | tail -n 1
}

aisci_pbs_select() {  # select=N:ncpus=..:mpiprocs=..:ompthreads=..:ngpus=..
  local line
  line=$(sed -n 's/^#PBS[[:space:]]\{1,\}-l[[:space:]]\{1,\}select=\([^[:space:]]*\).*/\1/p' "$1" | tail -n 1)
  [ -n "$line" ] || return 0
  if [ "$2" = "select" ]; then
    echo "${line%%:*}"
  else
    echo ":$line" | tr ':' '\n' | sed -n "s/^$2=//p" | tail -n 1
  fi
}

aisci_from_directives() {
  local script=$1 gres
  if grep -q '^#SBATCH' "$script" 2>/dev/null; then
    A_NODES=${A_NODES:-$(aisci_sbatch_opt "$script" nodes)}
    A_TPN=${A_TPN:-$(aisci_sbatch_opt "$script" ntasks-per-node)}
    if [ -z "$A_TPN" ]; then
      local ntasks
      ntasks=$(aisci_sbatch_opt "$script" ntasks)
      if [ -n "$ntasks" ]; then A_TPN=$(( ntasks / ${A_NODES:-1} )); fi
    fi
    A_CPT=${A_CPT:-$(aisci_sbatch_opt "$script" cpus-per-task)}
    A_GPN=${A_GPN:-$(aisci_sbatch_opt "$script" gpus-per-node)}
    if [ -z "$A_GPN" ]; then
      gres=$(aisci_sbatch_opt "$script" gres)
      if [[ "$gres" =~ gpu(:[A-Za-z0-9_]+)?:([0-9]+) ]]; then A_GPN=${BASH_REMATCH[2]}; fi
    fi
  elif grep -q '^#PBS' "$script" 2>/dev/null; then
    A_NODES=${A_NODES:-$(aisci_pbs_select "$script" select)}
    A_TPN=${A_TPN:-$(aisci_pbs_select "$script" mpiprocs)}
    A_CPT=${A_CPT:-$(aisci_pbs_select "$script" ompthreads)}
    A_GPN=${A_GPN:-$(aisci_pbs_select "$script" ngpus)}
    A_CORES=${A_CORES:-$(aisci_pbs_select "$script" ncpus)}
  fi
}

aisci_from_slurm() {
  A_NODES=${A_NODES:-${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-}}}
  if [ -z "$A_TPN" ] && [ -n "${SLURM_NTASKS:-}" ]; then
    # Every node must run the same number of ranks: "4(x2)" is fine, "3,1" is not.
    if [[ "${SLURM_TASKS_PER_NODE:-}" == *,* ]]; then
      aisci_die "uneven tasks per node (SLURM_TASKS_PER_NODE=$SLURM_TASKS_PER_NODE):" \
        "request --ntasks-per-node so that every node runs the same number of ranks"
    fi
    A_TPN=$(( SLURM_NTASKS / ${A_NODES:-1} ))
  fi
  A_CPT=${A_CPT:-${SLURM_CPUS_PER_TASK:-}}
  A_CORES=${A_CORES:-${SLURM_CPUS_ON_NODE:-}}
  A_GPN=${A_GPN:-${SLURM_GPUS_ON_NODE:-${SLURM_GPUS_PER_NODE:-}}}
  A_GPN=${A_GPN##*:}  # "a100:4" -> 4
}

aisci_from_pbs() {
  local total
  total=$(wc -l < "$PBS_NODEFILE")
  A_NODES=${A_NODES:-$(sort -u "$PBS_NODEFILE" | wc -l)}
  A_TPN=${A_TPN:-$(( total / A_NODES ))}
  A_CPT=${A_CPT:-${OMP_NUM_THREADS:-}}
  A_CORES=${A_CORES:-${NCPUS:-}}
  if [ -z "$A_GPN" ] && [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then  # PBS Pro sets it for ngpus
    A_GPN=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  fi
}

# aisci_init "$@": parse the job script's arguments ([--dry-run] [input file] [LAMMPS
# arguments...]) and find the allocation. Sets NODES, TASKS_PER_NODE, TASKS,
# CPUS_PER_TASK, CORES_PER_NODE, GPUS_PER_NODE, INPUT, LMP_ARGS, DRY_RUN, SCHEDULER.
aisci_init() {
  DRY_RUN=$(aisci_flag AISCI_DRY_RUN) || exit 2
  INPUT=""
  LMP_ARGS=()
  local a
  for a in "$@"; do
    if [ "$a" = "--dry-run" ]; then
      DRY_RUN=1
    elif [ -z "$INPUT" ] && [ ${#LMP_ARGS[@]} -eq 0 ] && [[ "$a" != -* ]]; then
      INPUT=$a
    else
      LMP_ARGS+=("$a")
    fi
  done
  # qsub passes no arguments to a job script: AISCI_INPUT and AISCI_LMP_ARGS (qsub -v)
  INPUT=${INPUT:-${AISCI_INPUT:-$AISCI_DEFAULT_INPUT}}
  if [ -n "${AISCI_LMP_ARGS:-}" ]; then
    local extra
    read -r -a extra <<< "$AISCI_LMP_ARGS"
    LMP_ARGS=("${extra[@]}" "${LMP_ARGS[@]}")
  fi

  A_NODES=${AISCI_NODES:-}
  A_TPN=${AISCI_TASKS_PER_NODE:-}
  A_CPT=${AISCI_CPUS_PER_TASK:-}
  A_CORES=${AISCI_CORES_PER_NODE:-}
  A_GPN=${AISCI_GPUS_PER_NODE:-}
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    SCHEDULER="slurm job $SLURM_JOB_ID"
    aisci_from_slurm
  elif [ -n "${PBS_NODEFILE:-}" ] && [ -r "${PBS_NODEFILE}" ]; then
    SCHEDULER="pbs job ${PBS_JOBID:-?}"
    aisci_from_pbs
  else
    # Outside a job (a dry run on a login node): the script's own #SBATCH/#PBS lines.
    # Inside a job they are not read: sbatch/qsub options may have overridden them.
    SCHEDULER="no job: sizes from the #SBATCH/#PBS lines of $AISCI_JOB_SCRIPT and AISCI_*"
    aisci_from_directives "$AISCI_JOB_SCRIPT"
  fi

  NODES=${A_NODES:-1}
  TASKS_PER_NODE=${A_TPN:-1}
  CPUS_PER_TASK=${A_CPT:-1}
  GPUS_PER_NODE=${A_GPN:-0}
  # Without a known core count, assume the request fills what was asked for.
  CORES_PER_NODE=${A_CORES:-$(( TASKS_PER_NODE * CPUS_PER_TASK ))}
  local n
  for n in NODES TASKS_PER_NODE CPUS_PER_TASK CORES_PER_NODE; do
    aisci_is_count "${!n}" || aisci_die "$n must be a positive integer, got '${!n}' (from" \
      "AISCI_$n, the scheduler's environment or the job script's directives)"
  done
  [[ "$GPUS_PER_NODE" =~ ^[0-9]+$ ]] || aisci_die "GPUS_PER_NODE must be an integer >= 0, got" \
    "'$GPUS_PER_NODE' (from AISCI_GPUS_PER_NODE, the scheduler's environment or the job" \
    "script's directives)"
  TASKS=$(( NODES * TASKS_PER_NODE ))
  OVERSUBSCRIBE=$(aisci_flag AISCI_OVERSUBSCRIBE) || exit 2

  if [ -z "${AISCI_LMP:-}" ]; then
    AISCI_LMP=$(cd "$AISCI_HPC_DIR/../.." && pwd)/build/bin/lmp-aisci
    [ -x "$AISCI_LMP" ] || AISCI_LMP=lmp-aisci
  fi
  AISCI_MPIEXEC=${AISCI_MPIEXEC:-mpiexec}
}

# ---- plans ------------------------------------------------------------------------------

# aisci_plan MODE: check that the allocation fits the input and fix the rank layout.
#   pimd     P beads (AISCI_BEADS) on P/K partitions (K = AISCI_BEADS_PER_WORLD) of M ranks
#   nn       NN-potential MD, one partition; one rank per GPU, or THREADS x ranks = cores
#   pimd_nn  both: partitions of M ranks, each rank with its GPU or its THREADS cores
#   dplr     NN + DPLR: THREADS = cpus-per-task - 1, the last core is the PPPM thread's
# Sets WORLDS, RANKS_PER_WORLD, THREADS, GPU_MODE and PARTITION_ARGS.
aisci_plan() {
  MODE=$1
  WORLDS=1
  BEADS=0
  BEADS_PER_WORLD=1
  THREADS=${AISCI_THREADS:-$CPUS_PER_TASK}
  GPU_MODE=0
  PARTITION_ARGS=()
  case "$MODE" in
    pimd | nn | pimd_nn | dplr) ;;
    *) aisci_die "unknown layout '$MODE' (expected pimd, nn, pimd_nn or dplr)" ;;
  esac

  if [ "$MODE" = pimd ] || [ "$MODE" = pimd_nn ]; then
    BEADS=${AISCI_BEADS:-8}
    BEADS_PER_WORLD=${AISCI_BEADS_PER_WORLD:-1}
    aisci_is_count "$BEADS" || aisci_die "AISCI_BEADS (P) must be a positive integer, got '$BEADS'"
    aisci_is_count "$BEADS_PER_WORLD" ||
      aisci_die "AISCI_BEADS_PER_WORLD (K) must be a positive integer, got '$BEADS_PER_WORLD'"
    if [ $(( BEADS % BEADS_PER_WORLD )) -ne 0 ]; then
      aisci_die "beads_per_world K = $BEADS_PER_WORLD does not divide P = $BEADS beads:" \
        "every partition must hold the same number of beads (choose K among the divisors of P)"
    fi
    WORLDS=$(( BEADS / BEADS_PER_WORLD ))
    if [ $(( TASKS % WORLDS )) -ne 0 ]; then
      aisci_die "P/K = $WORLDS partitions do not divide the $TASKS MPI tasks ($NODES nodes x" \
        "$TASKS_PER_NODE tasks per node): every partition needs the same number of ranks," \
        "request a multiple of $WORLDS tasks"
    fi
    PARTITION_ARGS=(-partition "${WORLDS}x$(( TASKS / WORLDS ))")
  fi
  RANKS_PER_WORLD=$(( TASKS / WORLDS ))

  if [ "$MODE" = dplr ]; then
    if [ "$CPUS_PER_TASK" -lt 2 ]; then
      aisci_die "DPLR needs a free core per rank for the long-range (PPPM) thread that overlaps" \
        "the short-range model: --cpus-per-task=$CPUS_PER_TASK, use at least 2 (libtorch threads" \
        "= cpus-per-task - 1)"
    fi
    THREADS=${AISCI_THREADS:-$(( CPUS_PER_TASK - 1 ))}
    if [ $(( THREADS + 1 )) -gt "$CPUS_PER_TASK" ]; then
      aisci_die "DPLR: $THREADS libtorch threads + 1 PPPM thread > $CPUS_PER_TASK cpus per task"
    fi
  fi
  aisci_is_count "$THREADS" || aisci_die "AISCI_THREADS must be a positive integer, got '$THREADS'"

  if [ "$MODE" != pimd ] && [ "$GPUS_PER_NODE" -gt 0 ]; then
    GPU_MODE=1
    if [ "$MODE" = nn ] && [ "$TASKS_PER_NODE" -ne "$GPUS_PER_NODE" ]; then
      aisci_die "one rank per GPU: $TASKS_PER_NODE tasks per node but $GPUS_PER_NODE GPUs per" \
        "node (request --ntasks-per-node=$GPUS_PER_NODE)"
    fi
    if [ $(( TASKS_PER_NODE % GPUS_PER_NODE )) -ne 0 ]; then
      aisci_die "$TASKS_PER_NODE tasks per node do not share $GPUS_PER_NODE GPUs evenly" \
        "(tasks per node must be a multiple of the GPUs per node)"
    fi
  fi

  local per_rank=$THREADS
  if [ "$MODE" = dplr ]; then per_rank=$(( THREADS + 1 )); fi
  if [ "$per_rank" -gt "$CPUS_PER_TASK" ] && [ "$OVERSUBSCRIBE" != 1 ]; then
    aisci_die "$THREADS threads per rank need $per_rank cores but a task has $CPUS_PER_TASK" \
      "(--cpus-per-task)"
  fi
  if [ $(( TASKS_PER_NODE * CPUS_PER_TASK )) -gt "$CORES_PER_NODE" ] && [ "$OVERSUBSCRIBE" != 1 ]; then
    aisci_die "threads x tasks > cores: $TASKS_PER_NODE tasks per node x $CPUS_PER_TASK cores per" \
      "task = $(( TASKS_PER_NODE * CPUS_PER_TASK )) > $CORES_PER_NODE cores per node" \
      "(set AISCI_OVERSUBSCRIBE=1 only for tests)"
  fi
}

# ---- command line and map ---------------------------------------------------------------

aisci_command() {
  # AISCI_MPIEXEC may carry flags of its own ("mpiexec --mca btl self,vader")
  local base
  read -r -a base <<< "$AISCI_MPIEXEC"
  MPI_CMD=("${base[@]}" -n "$TASKS")
  local openmpi=0
  if "${base[0]}" --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
    openmpi=1
  elif [ "$DRY_RUN" = 1 ] && [[ "$(basename "${base[0]}")" =~ ^(mpiexec|mpirun|orterun)$ ]]; then
    openmpi=1  # a dry run on a machine without MPI: show the Open MPI command
  fi
  if [ "$openmpi" = 1 ]; then
    if [ "$OVERSUBSCRIBE" = 1 ]; then
      MPI_CMD+=(--oversubscribe --bind-to none)
    else
      # ranks fill node 0 first, then node 1, ...; each gets CPUS_PER_TASK adjacent cores
      MPI_CMD+=(--map-by "ppr:${TASKS_PER_NODE}:node:PE=${CPUS_PER_TASK}" --bind-to core
                --report-bindings)
    fi
    if [ "$(id -u)" -eq 0 ]; then MPI_CMD+=(--allow-run-as-root); fi
  fi
  local gpus=0
  if [ "$GPU_MODE" = 1 ]; then gpus=$GPUS_PER_NODE; fi
  LMP_CMD=(bash "$AISCI_HPC_DIR/aisci_layout.sh" --rank-exec "$gpus" "$THREADS" --
           "$AISCI_LMP" -in "$INPUT" "${PARTITION_ARGS[@]}" -nocite)
  if [ "$BEADS" -gt 0 ]; then
    LMP_CMD+=(-var beads_per_world "$BEADS_PER_WORLD")
  fi
  LMP_CMD+=("${LMP_ARGS[@]}")
}

aisci_range() {  # "a-b", or "a" when a = b
  if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi
}

aisci_print_map() {
  local r node local_rank world cores dev c0
  echo "aisci_layout: $SCHEDULER"
  echo "aisci_layout: $NODES nodes x $TASKS_PER_NODE tasks per node = $TASKS MPI ranks;" \
       "$CPUS_PER_TASK cores per task, $CORES_PER_NODE cores per node, $GPUS_PER_NODE GPUs per node"
  case "$MODE" in
    pimd | pimd_nn)
      echo "aisci_layout: P = $BEADS beads = $WORLDS partitions x K = $BEADS_PER_WORLD beads per" \
           "partition; $RANKS_PER_WORLD ranks per partition (-partition ${WORLDS}x$RANKS_PER_WORLD)" ;;
  esac
  if [ "$MODE" = dplr ]; then
    echo "aisci_layout: per rank $THREADS libtorch threads + 1 PPPM overlap thread on" \
         "$CPUS_PER_TASK cores"
  else
    echo "aisci_layout: per rank $THREADS threads (OMP_NUM_THREADS, -var threads)"
  fi
  for (( r = 0; r < TASKS; r++ )); do
    node=$(( r / TASKS_PER_NODE ))
    local_rank=$(( r % TASKS_PER_NODE ))
    world=$(( r / RANKS_PER_WORLD ))
    if [ "$OVERSUBSCRIBE" = 1 ]; then
      cores="any (oversubscribed, not bound)"
    else
      c0=$(( local_rank * CPUS_PER_TASK ))
      cores=$(aisci_range "$c0" $(( c0 + CPUS_PER_TASK - 1 )))
    fi
    if [ "$GPU_MODE" = 1 ]; then
      dev="cuda:$(aisci_gpu_of_local "$local_rank" "$GPUS_PER_NODE")"
    else
      dev=cpu
    fi
    if [ "$BEADS" -gt 0 ]; then
      echo "aisci_layout: rank $r node $node local $local_rank partition $world (beads" \
           "$(aisci_range $(( world * BEADS_PER_WORLD )) $(( world * BEADS_PER_WORLD + BEADS_PER_WORLD - 1 ))))" \
           "device $dev cores $cores"
    else
      echo "aisci_layout: rank $r node $node local $local_rank device $dev cores $cores"
    fi
  done
}

# aisci_restart_step STEM: the last timestep N for which all WORLDS restart files
# STEM.N.1 ... STEM.N.WORLDS exist (one per partition, as `write_restart STEM.*.${ibead}`
# writes them with `variable ibead uloop`); empty when there is none. A newer, incomplete
# set (a job killed while writing) is reported and skipped.
aisci_restart_step() {
  local stem=$1 steps n w complete
  steps=$( (ls -1 "$stem".*.1 2>/dev/null || true) |
          sed -n "s|^$stem\.\([0-9][0-9]*\)\.1\$|\1|p" | sort -n -r)
  for n in $steps; do
    complete=1
    for (( w = 1; w <= WORLDS; w++ )); do
      [ -s "$stem.$n.$w" ] || complete=0
    done
    if [ "$complete" = 1 ]; then
      echo "$n"
      return 0
    fi
    echo "aisci_layout: restart set $stem.$n.* is incomplete (not all $WORLDS partitions): skipped" >&2
  done
}

# aisci_resume STEM: continue from the last complete restart set STEM.N.* (see
# aisci_restart_step) by passing -var restart_stem STEM -var restart_step N (0 = none:
# the input starts fresh). Creates STEM's folder. Call after aisci_plan.
aisci_resume() {
  local stem=$1 step
  [ "$DRY_RUN" = 1 ] || mkdir -p "$(dirname "$stem")"
  step=$(aisci_restart_step "$stem")
  if [ -n "$step" ]; then
    echo "aisci_layout: resuming from step $step: $stem.$step.1 ... $stem.$step.$WORLDS"
  else
    echo "aisci_layout: no restart set $stem.<step>.<partition>: starting fresh"
  fi
  LMP_ARGS+=(-var restart_stem "$stem" -var restart_step "${step:-0}")
}

# aisci_var_value NAME: the value of LAMMPS variable NAME as the run will see it: the
# first `-var NAME VALUE` of LMP_ARGS (command-line variables win), else the input's
# `variable NAME index VALUE` line; empty when neither sets it.
aisci_var_value() {
  local k
  for (( k = 0; k + 2 < ${#LMP_ARGS[@]}; k++ )); do
    if [ "${LMP_ARGS[k]}" = -var ] || [ "${LMP_ARGS[k]}" = -v ]; then
      if [ "${LMP_ARGS[k+1]}" = "$1" ]; then echo "${LMP_ARGS[k+2]}"; return 0; fi
    fi
  done
  local sp='[[:space:]]\{1,\}'
  sed -n "s/^[[:space:]]*variable${sp}$1${sp}index${sp}\([^[:space:]#]*\).*/\1/p" "$INPUT" \
    2>/dev/null | head -n 1
}

# aisci_check_files: the launcher, the input and the files the run reads, before anything
# starts (and in a dry run): the data file and models that the job scripts and example
# inputs name through the variables data, model, sr and dw, and the input's read_data
# files given literally. A missing one stops with exit 2 naming it. Paths with LAMMPS
# variables in them ($x, ${x}) are left to LAMMPS.
aisci_check_files() {
  local where="working directory $(pwd)" name value file
  [ -x "$AISCI_LMP" ] || { [[ "$AISCI_LMP" != */* ]] && command -v "$AISCI_LMP" > /dev/null; } ||
    aisci_die "launcher '$AISCI_LMP' not found or not executable: build USER-AISCI or set AISCI_LMP"
  [ -r "$INPUT" ] || aisci_die "input file '$INPUT' not found ($where)"
  for name in data model sr dw; do
    value=$(aisci_var_value "$name")
    [ -n "$value" ] && [[ "$value" != *'$'* ]] || continue
    [ -r "$value" ] || aisci_die "file '$value' of LAMMPS variable $name not found ($where;" \
      "set by -var $name or by the input's variable $name line)"
  done
  while read -r file; do
    [ -n "$file" ] && [[ "$file" != *'$'* ]] || continue
    [ -r "$file" ] || aisci_die "data file '$file' (read_data in $INPUT) not found ($where)"
  done < <(sed -n 's/^[[:space:]]*read_data[[:space:]]\{1,\}\([^[:space:]#]*\).*/\1/p' "$INPUT")
}

aisci_launch() {
  aisci_command
  aisci_print_map
  echo "aisci_layout: command: ${MPI_CMD[*]} ${LMP_CMD[*]}"
  aisci_check_files
  if [ "$DRY_RUN" = 1 ]; then
    echo "aisci_layout: dry run: nothing started"
    return 0
  fi
  if [ "$OVERSUBSCRIBE" = 1 ]; then
    export OMPI_MCA_mpi_yield_when_idle=1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  "${MPI_CMD[@]}" "${LMP_CMD[@]}"
}
