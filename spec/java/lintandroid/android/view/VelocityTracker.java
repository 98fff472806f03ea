package android.view;

/* A stub of Android's VelocityTracker: obtained from a pool, recycled into it. */
public class VelocityTracker {
    public static VelocityTracker obtain() { return new VelocityTracker(); }
    public void addMovement(MotionEvent event) { }
    public void recycle() { }
}
