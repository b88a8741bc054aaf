#!/usr/bin/env python3
"""Sums a perf.data profile's self time into cost categories (kernel wake-ups
and futexes, TCP, malloc, CAF, asio, Beast, JSON, ...), by library and symbol
name. Used by bench/profile.sh; the categories are what bench/ANALYSIS.md
reports per call / per chunk.

    bench/profile_categories.py PERF.DATA
"""
import re,subprocess,sys
data=sys.argv[1]
out=subprocess.run(["perf","report","-i",data,"--no-children","--sort","dso,sym","--stdio","-g","none","--percent-limit","0.01"],capture_output=True,text=True).stdout
cats={}
rules=[
 ("malloc/free (glibc)", r"libc.*(malloc|_int_free|cfree|free@|unlink_chunk|malloc_consolidate|tcache|_int_realloc|realloc)"),
 ("pthread mutex/cond (user side)", r"pthread_|__lll_lock|__futex"),
 ("memcpy/memmove/strlen/cmp", r"libc.*(mem|str)"),
 ("perf's own tracepoints (perf stat counting syscalls meanwhile)", r"\[k\] (perf_|syscall_trace_enter|trace_|__trace)"),
 ("kernel: wake-up, context switch, futex", r"\[k\] .*(_raw_spin_unlock_irq|finish_task_switch|futex|schedule|try_to_wake|switch_|__switch|pick_next|enqueue_task|dequeue_task|update_curr|select_task|ttwu|psi_|sched)"),
 ("kernel: TCP/loopback send+recv", r"\[k\] .*(tcp|skb|ip_|inet|__dev_|net_|sock|loopback|__alloc_skb|kmem|copy_|_copy|csum|netif|napi|release_sock|lock_sock|__kfree|kfree|__netif|validate_xmit|dst_|nf_|__ip|raw_|page_frag)"),
 ("kernel: epoll", r"\[k\] .*(ep_|epoll)"),
 ("kernel: syscall entry/exit, other", r"\[k\]"),
 ("Beast WebSocket framing", r"\[\.\] boost::beast"),
 ("asio executors/strands/handlers (incl. shared_ptr refcounts)", r"\[\.\] (boost::asio|std::_Sp_counted|void boost::asio|boost::system)"),
 ("CAF runtime (mailbox, scheduler, messages)", r"libcaf|\[\.\] (caf::|void caf::|bool caf::)"),
 ("JSON (simdjson, jsonrpc decode/encode)", r"simdjson|\[\.\] actor_host::net::(jsonrpc|json_raw)"),
 ("libstdc++ (dynamic_cast, strings, hashing)", r"libstdc|dyncast|dynamic_cast|\[\.\] std::"),
 ("actor-host code (actors, ws/http sessions)", r"actor_host|actor-host"),
]
tot=0
for line in out.splitlines():
    m=re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\[.\])\s+(.*)",line)
    if not m: continue
    pct=float(m.group(1)); dso=m.group(2); sym=m.group(4)
    key=dso+" "+m.group(3)+" "+sym
    tot+=pct
    for name,rx in rules:
        if re.search(rx,key):
            cats[name]=cats.get(name,0)+pct; break
    else:
        cats["other ("+dso+")"]=cats.get("other ("+dso+")",0)+pct
for k,v in sorted(cats.items(),key=lambda x:-x[1]):
    print("%6.1f%%  %s"%(v,k))
print("total %.1f"%tot)
