package android.view;

/* A stub of Android's MotionEvent: obtained from a pool, recycled into it. */
public class MotionEvent {
    public static MotionEvent obtain(long down, long at, int action, float x, float y, int meta) {
        return new MotionEvent();
    }
    public static MotionEvent obtain(MotionEvent other) { return new MotionEvent(); }
    public float getX() { return 0f; }
    public void recycle() { }
}
