import java.io.File;
import java.util.Iterator;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/*
 * The oracle of sift's "visualvm" model (spec/visualvm_spec.lua): VisualVM's
 * heap library (Debian package visualvm) opens a dump and prints, for every
 * object, Instance.getSize() and Instance.getRetainedSize():
 *   o <id hex> <size> <retained>   an instance or array
 *   c <id hex> <size> <retained>   a class object (its ClassDumpInstance)
 *   t <id hex>                     the 100 largest retainers, largest first
 * and a summary line: reachable=<objects with a retained size>.
 */
public class VisualVMSizes {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        StringBuilder out = new StringBuilder(1 << 20);
        List<Instance> top = heap.getBiggestObjectsByRetainedSize(100);  // computes them all
        for (Iterator<Instance> it = heap.getAllInstancesIterator(); it.hasNext(); ) {
            Instance i = it.next();
            out.append("o ").append(Long.toHexString(i.getInstanceId())).append(' ')
               .append(i.getSize()).append(' ').append(i.getRetainedSize()).append('\n');
        }
        for (JavaClass c : heap.getAllClasses()) {
            Instance i = heap.getInstanceByID(c.getJavaClassId());
            if (i == null) continue;
            out.append("c ").append(Long.toHexString(i.getInstanceId())).append(' ')
               .append(i.getSize()).append(' ').append(i.getRetainedSize()).append('\n');
        }
        for (Instance i : top) out.append("t ").append(Long.toHexString(i.getInstanceId())).append('\n');
        System.out.print(out);
    }
}
