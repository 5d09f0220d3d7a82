# Memory over schedule position for the issue-5 configurations on one workload
# (docs/overlap.md).  Driven by plots/memory_investigation.sh, which sets:
#   memdir   directory written by `schedbench run --mem-dir`
#   workload the workload's name as it appears in the file names
#   out      PNG to write
# Each timeline is position,node,name,mem_bytes; memory is drawn in GiB, with
# the original peak + 2% (membound's cap) as a dashed line.
if (!exists("memdir")) memdir = "/tmp/schedbench-mem"
if (!exists("workload")) workload = "llama3-8b-bwd"
if (!exists("out")) out = "memory_investigation.png"

set terminal pngcairo size 1200,900 font ",10"
set output out
set datafile separator ","
set grid
set ylabel "live memory (GiB)"

file(s) = sprintf("%s/%s__%s.csv", memdir, workload, s)
gib(b) = b / 1073741824.0

stats file("original") using 4 name "ORIG" nooutput
cap = gib(ORIG_max * 1.02)

# the five timelines, drawn in both panels
draw = 'plot file("original") using 1:(gib($4)) every ::1 with lines lw 2 lc rgb "#000000" title "original", \
     file("overlap") using 1:(gib($4)) every ::1 with lines lw 1.5 lc rgb "#d62728" title "overlap", \
     file("overlap_prefetch_0") using 1:(gib($4)) every ::1 with lines lw 1.5 lc rgb "#ff7f0e" title "overlap, no prefetch", \
     file("memfallback") using 1:(gib($4)) every ::1 with lines lw 1.5 lc rgb "#1f77b4" title "memfallback", \
     file("membound") using 1:(gib($4)) every ::1 with lines lw 1.5 lc rgb "#2ca02c" title "membound", \
     cap with lines dashtype 2 lc rgb "#555555" title sprintf("original peak + 2%% (%.2f GiB)", cap)'

set multiplot layout 2,1 title sprintf("%s: memory over the schedule", workload) noenhanced
set key top right box opaque
set xlabel "schedule position"
@draw
set title "first 800 positions: the loss head holds the peak" noenhanced
set xrange [0:800]
unset key
@draw
unset multiplot
