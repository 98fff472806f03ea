import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

/*
 * The peer of sift's dominator tree: VisualVM's heap library opens the
 * dump and computes retained sizes (getBiggestObjectsByRetainedSize forces
 * the whole computation). Used by `make bench` (bench/hprof.lua).
 */
public class VisualVMRetained {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        Instance top = heap.getBiggestObjectsByRetainedSize(10).get(0);
        System.out.println("top_retained=" + top.getRetainedSize());
    }
}
