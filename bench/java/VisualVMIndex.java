import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;

/*
 * The peer of `sift info` on a heap dump: VisualVM's heap library (Debian
 * package visualvm) opens and indexes the dump, then reports the counts
 * sift reports (live instances, classes, GC roots). Peak memory comes from
 * /proc/self/status. Used by `make bench` (bench/hprof.lua).
 */
public class VisualVMIndex {
    public static void main(String[] args) throws Exception {
        File dump = new File(args[0]);
        Heap heap = HeapFactory.createHeap(dump);
        long instances = heap.getSummary().getTotalLiveInstances();
        int classes = heap.getAllClasses().size();
        int roots = heap.getGCRoots().size();
        String hwm = Files.readAllLines(Path.of("/proc/self/status")).stream()
            .filter(l -> l.startsWith("VmHWM:")).findFirst().orElse("VmHWM: 0 kB");
        long peakKb = Long.parseLong(hwm.replaceAll("[^0-9]", ""));
        System.out.println("instances=" + instances + " classes=" + classes + " roots=" + roots
                           + " peak_kb=" + peakKb);
    }
}
