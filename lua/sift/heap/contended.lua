--- The JDK's `@Contended` classes and fields, per JDK version, as data for
-- `--model jvm` (sift.heap.jvm_layout). HotSpot honours the annotation
-- only on the JDK's own classes (-XX:+RestrictContended, the default), so
-- this list is all there is on a default JVM: an application's class is
-- never padded.
--
-- Each entry names a class; `class = true` when the class itself is
-- annotated (padding before its own fields and after them), and every
-- other key is a contention group (the annotation's value) listing its
-- fields in declaration order (the group is laid out after the class's
-- other fields, between paddings). A field a dump's class does not have is
-- ignored, so one list serves a JDK's update releases.
--
-- Read from the JDK sources (java.base; `sun.misc.Contended` in JDK 8,
-- `jdk.internal.vm.annotation.Contended` from JDK 9): jdk8u, jdk11u (11.0.5),
-- jdk17u (and Debian's 17.0.15 class files), jdk21u-dev.
-- @module sift.heap.contended

local TLR = { "threadLocalRandomSeed", "threadLocalRandomProbe", "threadLocalRandomSecondarySeed" }

return {
  [8] = {
    ["java.lang.Thread"] = { tlr = TLR },
    ["java.util.concurrent.ConcurrentHashMap$CounterCell"] = { class = true },
    ["java.util.concurrent.Exchanger$Node"] = { class = true },
    ["java.util.concurrent.ForkJoinPool"] = { class = true },
    ["java.util.concurrent.ForkJoinPool$WorkQueue"] = { class = true },
    ["java.util.concurrent.atomic.Striped64$Cell"] = { class = true },
  },
  [11] = {
    ["java.lang.Thread"] = { tlr = TLR },
    ["java.util.concurrent.ConcurrentHashMap$CounterCell"] = { class = true },
    ["java.util.concurrent.Exchanger$Node"] = { class = true },
    ["java.util.concurrent.ForkJoinPool"] = { fjpctl = { "ctl" } },
    ["java.util.concurrent.ForkJoinPool$WorkQueue"] = { class = true },
    ["java.util.concurrent.SubmissionPublisher$BufferedSubscription"] = { class = true, c = { "demand", "waiting" } },
    ["java.util.concurrent.atomic.Striped64$Cell"] = { class = true },
  },
  [17] = {
    ["java.lang.Thread"] = { tlr = TLR },
    ["java.util.concurrent.ConcurrentHashMap$CounterCell"] = { class = true },
    ["java.util.concurrent.Exchanger$Node"] = { class = true },
    ["java.util.concurrent.ForkJoinPool"] = { fjpctl = { "ctl" } },
    ["java.util.concurrent.ForkJoinPool$WorkQueue"] = { w = { "top", "source", "nsteals" } },
    ["java.util.concurrent.SubmissionPublisher$BufferedSubscription"] = { class = true, c = { "demand", "waiting" } },
    ["java.util.concurrent.atomic.Striped64$Cell"] = { class = true },
  },
  [21] = {
    ["java.lang.Thread"] = { tlr = TLR },
    ["java.util.concurrent.ConcurrentHashMap$CounterCell"] = { class = true },
    ["java.util.concurrent.Exchanger$Node"] = { class = true },
    ["java.util.concurrent.ForkJoinPool"] = { fjpctl = { "ctl", "parallelism" } },
    ["java.util.concurrent.ForkJoinPool$WorkQueue"] = { w = { "top", "access", "phase", "source", "nsteals" } },
    ["java.util.concurrent.SubmissionPublisher$BufferedSubscription"] = { class = true, c = { "demand", "waiting" } },
    ["java.util.concurrent.atomic.Striped64$Cell"] = { class = true },
  },
}
