--- Known leaks in Android and in vendors' builds of it: references that
-- keep an object alive through no fault of the app, and references a
-- leak path should never go through.
--
--     local known = require "sift.heap.known_leaks"
--     local library, ignored = known.rules(leaks.metadata(heap))
--
-- An entry names one reference and when it applies:
-- `{ class, field | static | root_class, sdk = { first, last }?,
-- makers = { manufacturer, ... }?, description }`. A `root_class` entry
-- is an object the native code holds as a global variable. The Android
-- versions and manufacturers are the ones LeakCanary's catalogue gives;
-- the descriptions are ours.
local M = {}

local IMM = "android.view.inputmethod.InputMethodManager"
local ANY = math.huge

local function sdk(first, last) return { first, last or first } end

--- Library leaks: a trace through one of these is reported apart, as a
-- leak the app can work around but did not cause.
M.library = {
  -- InputMethodManager keeps the last focused views and their connections
  { class = IMM, field = "mNextServedView", sdk = sdk(15, 33),
    description = "InputMethodManager keeps the view that was to be served next after its window is gone." },
  { class = IMM, field = "mServedView", sdk = sdk(15, 28),
    description = "InputMethodManager keeps the view it last served after its window is gone." },
  { class = IMM, field = "mServedInputConnection", sdk = sdk(15, 27),
    description = "InputMethodManager keeps the input connection of a destroyed window, and with it the view." },
  { class = IMM, field = "mCurRootView", sdk = sdk(15, 28),
    description = "InputMethodManager keeps the root view of the window that last had focus." },
  { class = IMM, field = "mImeInsetsConsumer", sdk = sdk(31, ANY),
    description = "InputMethodManager keeps the IME insets consumer of a window that is gone." },
  { class = IMM, field = "mLastSrvView", sdk = sdk(23, 28), makers = { "HUAWEI" },
    description = "Huawei's InputMethodManager adds a field that keeps the last served view." },
  { class = IMM, field = "mCurrentInputConnection", sdk = sdk(28, 30), makers = { "samsung" },
    description = "Samsung's InputMethodManager keeps its input connection after the activity is destroyed." },
  { class = IMM, field = "mLastFocusView", sdk = sdk(29), makers = { "LGE" },
    description = "LG's InputMethodManager keeps the last focused view after it is detached." },
  { root_class = IMM .. "$ControlledInputConnectionWrapper",
    description = "Native code holds the input connection wrapper in a global variable." },

  -- messages and handlers
  { class = "android.os.Message", field = "obj", sdk = sdk(0, 30),
    description = "A message a looper has recycled can still be held by a thread blocked on a queue, "
      .. "with the object it last carried." },
  { class = "android.widget.Editor$Blink", field = "this$0", sdk = sdk(0, 23),
    description = "The cursor blink posts delayed messages that outlive a closed dialog's text field." },
  { class = "android.nfc.cardemulation.HostApduService$MsgHandler", field = "this$0", sdk = sdk(29, 33),
    description = "A handler of HostApduService outlives the service." },
  { class = "android.net.ConnectivityManager$CallbackHandler", field = "this$0", sdk = sdk(33),
    description = "Network callback handlers can be held statically with a ConnectivityManager made from an activity." },

  -- system services that cache the first context they were made with
  { class = "android.net.ConnectivityManager", static = "sInstance", sdk = sdk(0, 23),
    description = "ConnectivityManager caches its first instance statically, with the context it was made from; "
      .. "get it from the application context first." },
  { class = "android.os.UserManager", field = "mContext", sdk = sdk(18, 25),
    description = "UserManager caches an instance made with the first caller's context; "
      .. "call UserManager.get() from the Application first." },
  { class = "android.media.MediaScannerConnection", field = "mContext", sdk = sdk(0, 22),
    description = "MediaScannerConnection.scanFile() may stay connected after the activity passed to it is gone." },
  { class = "android.media.AudioManager$1", field = "this$0", sdk = sdk(0, 22),
    description = "Before Android M, AudioManager kept the context it got (an activity for VideoView) with its audio focus." },
  { class = "android.app.ActivityThread", field = "mNewActivities", sdk = sdk(19, 33),
    description = "ActivityThread keeps newly resumed activities until the main thread goes idle." },
  { class = "android.hardware.input.InputManager", field = "mLateInitContext", sdk = sdk(33),
    description = "InputManager keeps the context it was initialised with." },
  { class = "android.speech.tts.TextToSpeech", field = "mContext", sdk = sdk(24),
    description = "TextToSpeech.shutdown() keeps its context; another process holds the instance." },
  { class = "android.speech.tts.TtsEngines", field = "mContext", sdk = sdk(24),
    description = "TextToSpeech.shutdown() keeps its context; another process holds the instance." },
  { class = "android.media.session.MediaSessionLegacyHelper", static = "sInstance", sdk = sdk(21),
    description = "MediaSessionLegacyHelper caches an instance with the first caller's context." },
  { class = "android.animation.AnimationHandler", field = "mAnimatorRequestors", sdk = sdk(33),
    description = "The AnimationHandler singleton keeps the view root of a destroyed activity." },

  -- inner classes that keep their outer instance
  { class = "android.text.TextLine", static = "sCached", sdk = sdk(0, 22),
    description = "TextLine's static cache keeps the spans of the last text it laid out." },
  { class = "android.widget.Editor$SpanController", field = "this$0", sdk = sdk(0, 19),
    description = "An editor's span controller stays in the text's spans after the view is gone." },
  { class = "android.widget.Editor$EasyEditSpanController", field = "this$0", sdk = sdk(0, 19),
    description = "An editor's span controller stays in the text's spans after the view is gone." },
  { class = "android.animation.LayoutTransition$1", field = "val$parent", sdk = sdk(14, 22),
    description = "A layout transition's listener keeps its parent view while the animation is registered." },
  { class = "android.view.textservice.SpellCheckerSession$1", field = "this$0", sdk = sdk(16, 24),
    description = "The spell checker session's handler outlives the text view." },
  { class = "android.widget.SpellChecker$1", field = "this$0", sdk = sdk(22),
    description = "A spell checker callback outlives its text view." },
  { class = "android.media.projection.MediaProjection$MediaProjectionCallback", field = "this$0", sdk = sdk(22, 28),
    description = "The system keeps the media projection callback, which keeps the projection." },
  { class = "android.speech.SpeechRecognizer$InternalListener", field = "this$0", sdk = sdk(0, 20),
    description = "The recognition service keeps the recognizer's listener after destroy()." },
  { class = "android.accounts.AccountManager$AmsTask$Response", field = "this$1", sdk = sdk(0, 27),
    description = "An account task's binder response keeps the task, and the activity it was started with." },
  { class = "android.appwidget.AppWidgetHost$Callbacks", field = "this$0", sdk = sdk(0, 21),
    description = "Native code holds the widget host callbacks, which kept their context." },
  { class = "android.app.ApplicationPackageManager$HasSystemFeatureQuery", field = "this$0", sdk = sdk(29),
    description = "An Android 11 preview made this cache query an inner class of the package manager." },
  { class = "android.companion.CompanionDeviceService$Stub", field = "this$0", sdk = sdk(31),
    description = "The service's binder stub is kept after the service is destroyed." },

  -- text, accessibility and view internals
  { class = "android.view.accessibility.AccessibilityNodeInfo", field = "mOriginalText", sdk = sdk(26, 27),
    description = "Pooled accessibility nodes keep their original text, and its spans, after they are released." },
  { class = "android.app.assist.AssistStructure$ViewNodeText", field = "mText", sdk = sdk(24, ANY),
    description = "Autofill and the assistant keep the text on screen, whose spans hold views." },
  { class = "android.widget.AccessibilityIterators$LineTextSegmentIterator", field = "mLayout", sdk = sdk(27),
    description = "An accessibility iterator keeps a text layout, whose spans hold views." },
  { class = "android.view.accessibility.AccessibilityNodeIdManager", field = "mIdsToViews", sdk = sdk(28, 29),
    description = "Views detached before they were attached stay in the accessibility id table." },
  { class = "android.view.ViewGroup$ViewLocationHolder", field = "mRoot", sdk = sdk(28),
    description = "ViewLocationHolder.clear() leaves its root view set." },
  { class = "android.view.ViewGroup", field = "mPreSortedChildren", sdk = sdk(30),
    description = "A scratch list of children is not cleared after use." },
  { class = "android.view.ViewGroup", field = "mCurrentDragChild", sdk = sdk(29, 30),
    description = "A view group keeps the child last dragged after it is detached." },
  { class = "android.app.ActivityTransitionState", field = "mExitingToView", sdk = sdk(28, 29),
    description = "A shared element transition keeps the view it used." },
  { class = "android.hardware.biometrics.BiometricPrompt", field = "mFingerprintManager", sdk = sdk(28),
    description = "BiometricPrompt keeps a FingerprintManager made from a destroyed activity." },
  { class = "android.widget.Magnifier$InternalPopupWindow", field = "mCallback", sdk = sdk(28),
    description = "The renderer holds the magnifier's window natively, and its callback keeps the text view." },
  { class = "com.android.internal.policy.BackdropFrameRenderer", field = "mDecorView", sdk = sdk(24, 26),
    description = "A backdrop renderer thread that does not stop keeps the decor view." },

  -- objects native code holds in global variables
  { root_class = "android.widget.Toast$TN",
    description = "Native code holds a shown toast while the IPC call that shows it is alive." },
  { root_class = "android.graphics.animation.RenderNodeAnimator", sdk = sdk(31, 32),
    description = "A ripple animation still running when its view is detached is never released natively." },
  { root_class = "android.media.PlayerBase$1", sdk = sdk(24, 27),
    description = "An app-ops callback of PlayerBase is held natively, and keeps the player." },
  { root_class = "android.app.AppOpsManager$3", sdk = sdk(31, 32),
    description = "An app-ops callback stub stays held natively; androidx.core 1.10 works around it." },
  { root_class = "android.app.job.JobService$1", sdk = sdk(0, 23),
    description = "The binder stub of a JobService is held natively after the service is done." },
  { root_class = "android.service.dreams.DreamService$1", sdk = sdk(33, ANY),
    description = "The binder stub of a DreamService is held natively." },

  -- libraries
  { class = "com.facebook.flipper.plugins.inspector.descriptors.ApplicationDescriptor", static = "editedDelegates",
    description = "Flipper's layout inspector keeps root views after they are detached." },
  { class = "org.chromium.android_webview.AwContents", static = "A0",
    description = "A WebView weak map whose values hold their own keys, so it never clears." },

  -- Samsung
  { class = "com.samsung.android.smartclip.SpenGestureManager", static = "mContext", sdk = sdk(19), makers = { "samsung" },
    description = "Samsung's pen gesture manager keeps an activity in a static field." },
  { class = "android.sec.clipboard.ClipboardUIManager", field = "mContext", sdk = sdk(19, 21), makers = { "samsung" },
    description = "Samsung's clipboard UI singleton keeps the context of its first caller." },
  { root_class = "com.samsung.android.content.clipboard.SemClipboardManager$1", sdk = sdk(19, 28), makers = { "samsung" },
    description = "Samsung's clipboard callbacks are held natively during IPC." },
  { root_class = "com.samsung.android.content.clipboard.SemClipboardManager$3", sdk = sdk(19, 28), makers = { "samsung" },
    description = "Samsung's clipboard callbacks are held natively during IPC." },
  { class = "android.sec.clipboard.ClipboardExManager", field = "mContext", sdk = sdk(23), makers = { "samsung" },
    description = "A native paste callback keeps Samsung's clipboard manager and a destroyed activity." },
  { class = "android.sec.clipboard.ClipboardExManager", field = "mPersonaManager", sdk = sdk(23), makers = { "samsung" },
    description = "A native paste callback keeps Samsung's clipboard manager and a destroyed activity." },
  { class = "android.widget.TextView$IClipboardDataPasteEventImpl", field = "this$0", sdk = sdk(22), makers = { "samsung" },
    description = "A native paste callback keeps a detached text view." },
  { class = "com.samsung.android.emergencymode.SemEmergencyManager", field = "mContext", sdk = sdk(19, 24),
    makers = { "samsung" }, description = "Samsung's emergency-mode singleton keeps a window's context." },
  { class = "com.samsung.android.knox.SemPersonaManager", field = "mContext", sdk = sdk(24), makers = { "samsung" },
    description = "Samsung's Knox persona manager keeps an activity context." },
  { class = "android.app.SemAppIconSolution", field = "mContext", sdk = sdk(28, 29), makers = { "samsung" },
    description = "Samsung's app icon helper keeps an activity context." },
  { class = "com.android.org.chromium.android_webview.AwResource", static = "sResources", sdk = sdk(19),
    makers = { "samsung" }, description = "Samsung's WebView keeps resources made from an activity." },
  { class = "android.widget.TextView", static = "mLastHoveredView", sdk = sdk(19, 31), makers = { "samsung" },
    description = "Samsung's TextView keeps the last hovered view in a static field." },
  { class = "android.widget.TextView", static = "mTargetView", sdk = sdk(27), makers = { "samsung" },
    description = "Samsung's TextView keeps a detached view in a static field." },
  { class = "android.os.PersonaManager", field = "mContext", sdk = sdk(19), makers = { "samsung" },
    description = "Samsung's resources keep a persona manager made from an activity." },
  { class = "android.content.res.Resources", field = "mContext", sdk = sdk(19), makers = { "samsung" },
    description = "Samsung's Resources have a context field, which the zygote's resources set to an activity." },
  { class = "android.view.ViewConfiguration", field = "mContext", sdk = sdk(19), makers = { "samsung" },
    description = "Samsung's cached ViewConfiguration keeps an activity context." },
  { class = "android.media.AudioManager", static = "mContext_static", sdk = sdk(19), makers = { "samsung" },
    description = "Samsung's AudioManager keeps an activity in a static field." },
  { class = "android.app.ActivityManager", static = "mContext", sdk = sdk(22, 23), makers = { "samsung" },
    description = "Samsung's ActivityManager keeps an activity in a static field." },
  { class = "com.android.internal.policy.MultiWindowDecorSupport", field = "mWindow", sdk = sdk(26, 29),
    makers = { "samsung" }, description = "Samsung's multi-window support keeps the window of a destroyed activity." },

  -- other manufacturers
  { class = "android.gestureboost.GestureBoostManager", static = "mContext", sdk = sdk(24, 25), makers = { "HUAWEI" },
    description = "Huawei's gesture boost singleton keeps an activity context." },
  { class = "android.widget.BubblePopupHelper", static = "sHelper", sdk = sdk(19, 22), makers = { "LGE" },
    description = "LG's text bubble helper keeps the last focused view." },
  { class = "com.lge.systemservice.core.LGContext", field = "mContext", sdk = sdk(21), makers = { "LGE" },
    description = "LG's context singleton keeps an activity context." },
  { class = "com.lge.systemservice.core.SmartCoverManager", field = "mContext", sdk = sdk(27), makers = { "LGE" },
    description = "LG's smart cover manager, held by a native callback, keeps an activity context." },
  { class = "com.nvidia.ControllerMapper.MapperClient$ServiceClient", field = "this$0", sdk = sdk(19),
    makers = { "NVIDIA" }, description = "A handler in NVIDIA's controller mapper keeps its client and an activity context." },
  { class = "android.hardware.SystemSensorManager", static = "mAppContextImpl", sdk = sdk(19), makers = { "LENOVO" },
    description = "This build's SystemSensorManager stores its context statically; get it from the application context." },
  { class = "android.hardware.SystemSensorManager", static = "mAppContextImpl", sdk = sdk(22), makers = { "vivo" },
    description = "This build's SystemSensorManager stores its context statically; get it from the application context." },
  { class = "android.app.Instrumentation", static = "mRecommendActivity", sdk = sdk(21, 22), makers = { "Meizu" },
    description = "Flyme's Instrumentation keeps a framework activity statically." },
  { class = "android.app.admin.DevicePolicyManager$SettingsObserver", field = "this$0", sdk = sdk(19, 22),
    makers = { "motorola" }, description = "Motorola's DevicePolicyManager observer, held by binder, keeps its context." },
  { class = "android.app.ExtendedStatusBarManager", field = "mContext", sdk = sdk(30, ANY), makers = { "SHARP" },
    description = "Sharp's status bar manager keeps a context of a destroyed activity." },
  { class = "com.oneplus.util.OemSceneCallBlocker", static = "sContext", sdk = sdk(28), makers = { "OnePlus" },
    description = "OnePlus's call blocker keeps an activity in a static field." },
  { class = "android.os.PerfMonitor", static = "mLastCallback", sdk = sdk(30), makers = { "OnePlus" },
    description = "OnePlus's PerfMonitor keeps the last click callback, and its view, statically." },
  { class = "android.text.method.TextKeyListener", field = "mContext", sdk = sdk(28), makers = { "Razer" },
    description = "Razer's TextKeyListener, cached statically, has a context field." },
  { class = "android.content.res.ResourcesImpl", static = "mAppContext", sdk = sdk(30, ANY),
    makers = { "HMD Global", "INFINIX", "LENOVO", "Xiaomi" },
    description = "Some builds add a static context to ResourcesImpl that ends up holding a service or activity." },
}

--- References a leak path never goes through on Android: they are not
-- why anything stays alive, or a longer path says more.
M.ignored = {
  { thread = "main" },                     -- its locals change all the time
  { thread = "FinalizerWatchdogDaemon" },  -- only there while finalizing
  { thread = "LeakCanary-Heap-Dump" },     -- the thread that made the dump
  { class = "leakcanary.internal.InternalLeakCanary", field = "resumedActivity" },
  { class = "leakcanary.internal.InternalLeakCanary", field = "application" },
  { class = "android.view.Choreographer$FrameDisplayEventReceiver", field = "mMessageQueue" },
}

local function applies(entry, meta)
  local range = entry.sdk
  if range and meta.sdk_int and (meta.sdk_int < range[1] or meta.sdk_int > range[2]) then return false end
  if entry.makers then
    for _, m in ipairs(entry.makers) do
      if m == meta.manufacturer then return true end
    end
    return false
  end
  return true
end

--- The entries that apply to a dump: nothing for a dump that is not from
-- Android; for one from Android, the entries whose version range holds its
-- SDK_INT (all of them when it is unknown) and whose manufacturers include
-- its own.
-- @tparam table meta `{ android, sdk_int, manufacturer }` as `leaks.metadata` gives
-- @return library-leak entries, ignored-reference rules (`rule = "skip"`: paths do not take them)
function M.rules(meta)
  local library, ignored = {}, {}
  if not meta.android then return library, ignored end
  for _, e in ipairs(M.library) do
    if applies(e, meta) then library[#library + 1] = e end
  end
  for _, e in ipairs(M.ignored) do
    ignored[#ignored + 1] = { class = e.class, field = e.field, thread = e.thread, rule = "skip" }
  end
  return library, ignored
end

return M
