package sample;

import android.annotation.SuppressLint;
import android.content.Context;
import android.content.res.TypedArray;
import android.database.Cursor;
import android.database.sqlite.SQLiteDatabase;

/*
 * @SuppressLint on methods, read from the bytecode by sift lint
 * (spec/lint_suppress_lint_spec.lua): each method's comment says what is
 * reported with --rules android, and what is suppressed.
 */
public class Suppressed {
    private static final int[] ATTRS = { 1, 2 };

    /* reported: a TypedArray never recycled */
    int leaks(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* suppressed: the same leak, Android Lint's id */
    @SuppressLint("Recycle")
    int recycleSuppressed(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* suppressed: ids in a list, matched as Android Lint matches them (any case) */
    @SuppressLint({"NewApi", "recycle"})
    int listed(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* reported: an id of another check suppresses nothing here */
    @SuppressLint("NewApi")
    int otherId(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* a Cursor never closed, used outside a try: never-closed reported, op-outside-try suppressed */
    @SuppressLint("sift:cursor/op-outside-try")
    int oneCriterion(SQLiteDatabase db) {
        Cursor k = db.rawQuery("select 1", null);
        return k.getCount();
    }

    /* the TypedArray's finding suppressed, the Cursor's two reported */
    @SuppressLint("sift:typedarray")
    int twoLeaks(Context c, SQLiteDatabase db) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        Cursor k = db.rawQuery("select 1", null);
        return a.getInt(0, 0) + k.getCount();
    }

    /* suppressed: both of the Cursor's findings */
    @SuppressLint("all")
    int everything(SQLiteDatabase db) {
        Cursor k = db.rawQuery("select 1", null);
        return k.getCount();
    }

    /* suppressed: the leak in the lambda's body (lambda$inLambda$0), by the method it is written in */
    @SuppressLint("Recycle")
    Runnable inLambda(Context c) {
        return () -> {
            TypedArray a = c.obtainStyledAttributes(ATTRS);
            a.getInt(0, 0);
        };
    }

    /* suppressed: the leak in an anonymous class (Suppressed$1.run), by the method it is written in */
    @SuppressLint("Recycle")
    Runnable inAnonymous(final Context c) {
        return new Runnable() {
            public void run() {
                TypedArray a = c.obtainStyledAttributes(ATTRS);
                a.getInt(0, 0);
            }
        };
    }

    /* reported: the same in a method without it (Suppressed$2.run) */
    Runnable anonymousLeaks(final Context c) {
        return new Runnable() {
            public void run() {
                TypedArray a = c.obtainStyledAttributes(ATTRS);
                a.getInt(0, 0);
            }
        };
    }

    /* reported: nothing on it, nor on Suppressed */
    static class Inner {
        int leaks(Context c) {
            TypedArray a = c.obtainStyledAttributes(ATTRS);
            return a.getInt(0, 0);
        }
    }
}
