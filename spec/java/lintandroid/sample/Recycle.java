package sample;

import android.content.Context;
import android.content.res.TypedArray;
import android.view.MotionEvent;
import android.view.VelocityTracker;

/*
 * Android Lint's Recycle rule, shape by shape: each method's name says what
 * sift lint reports on it (spec/lint_android_rules_spec.lua lists them), by
 * default (Android Lint's terms) and under --strict.
 */
public class Recycle {
    private static final int[] ATTRS = { 1, 2 };
    private TypedArray kept;

    /* reported: obtained, read, never recycled nor passed on */
    int neverRecycled(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* fine: recycled, no try block asked for (--strict: an operation outside a try) */
    int recycled(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        int n = a.getInt(0, 0);
        a.recycle();
        return n;
    }

    /* fine: recycled on one path is enough (--strict: left open on the other) */
    void recycledOnOnePath(Context c, boolean done) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        if (done) {
            a.recycle();
        }
    }

    /* fine: given to a method, it escapes (--strict: read, not recycled, by read) */
    int passedOn(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return read(a);
    }

    private int read(TypedArray a) {
        return a.getInt(1, 0);
    }

    /* fine: stored in a field */
    void stored(Context c) {
        kept = c.obtainStyledAttributes(ATTRS);
    }

    /* reported: an event obtained and never recycled */
    float eventNeverRecycled() {
        MotionEvent e = MotionEvent.obtain(0L, 0L, 0, 1f, 2f, 0);
        return e.getX();
    }

    /* reported: MotionEvent.obtain(e) copies e, which is still this method's to recycle */
    void eventCopied() {
        MotionEvent e = MotionEvent.obtain(0L, 0L, 0, 1f, 2f, 0);
        MotionEvent copy = MotionEvent.obtain(e);
        copy.recycle();
    }

    /* fine: a tracker recycled (--strict: an operation outside a try) */
    void tracker(MotionEvent event) {
        VelocityTracker t = VelocityTracker.obtain();
        t.addMovement(event);
        t.recycle();
    }
}
