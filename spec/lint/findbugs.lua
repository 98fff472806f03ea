-- FindBugs 3.1's open-resource findings (OS_OPEN_STREAM*, OBL_*, ODR_*) on
-- the corpus' Java 8 jars, each judged by reading the bytecode (javap -c
-- -p): right ones must be found by sift in the same method (or in `sift`,
-- the method where sift reports the same leak); wrong ones say why.
-- `jars` are those whose findings are all judged: the spec compares only
-- them and names the others.
return {
  jars = { "ant-1.10.13", "commons-io", "dom4j-2.1.1", "maven-shared-utils", "commons-codec", "junit4",
    "testng", "org.apache.felix.main", "plexus-classworlds" },
  -- judged but not compared: sift misses a right one there (StringTemplateGroup.loadTemplate)
  not_compared = { ["findbugs-3.0.1"] = "compared once (2026-11-26): FindBugs reports no open-resource finding in "
    .. "its own jar and takes 150 s of make test's 15 minutes to say so",
    ["stringtemplate-3.2.1"] = "sift takes a wrapper's constructor not to throw, so misses "
    .. "the FileInputStream left open when new InputStreamReader(in, encoding) throws UnsupportedEncodingException" },
  judged = {
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.Main", method = "getAntVersion",
      verdict = true, reason = "the stream of getResourceAsStream is closed right after Properties.load, in no finally "
        .. "(corpus #16)" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.Diagnostics",
      method = "doReportTasksAvailability", verdict = true,
      reason = "getResourceAsStream's stream is loaded into Properties and closed on no path" },
    { jar = "ant-1.10.13", pattern = "OBL", class = "org.apache.tools.ant.Diagnostics",
      method = "doReportTasksAvailability", verdict = true, reason = "the same stream as its OS finding" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.taskdefs.Checksum",
      method = "generateChecksums", verdict = false,
      reason = "the DigestInputStream it names wraps fis (local 2), which the finally closes with FileUtils.close "
        .. "(pc 617, 646): when read throws, the file is closed all the same; the wrapper holds no handle of its own" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.input.PropertyFileInputHandler",
      method = "readProps", verdict = true,
      reason = "Files.newInputStream handed to Properties.load and closed on no path" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.util.LayoutPreservingProperties",
      method = "saveAs", verdict = true,
      reason = "Files.newOutputStream closed after store() only: store throwing leaves it open" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.taskdefs.cvslib.ChangeLogTask",
      method = "loadUserlist", verdict = true,
      reason = "Files.newInputStream handed to Properties.load and closed on no path" },
    { jar = "ant-1.10.13", pattern = "OS", class = "org.apache.tools.ant.taskdefs.optional.unix.Symlink",
      method = "loadLinks", verdict = false,
      reason = "the file stream is closed by try-with-resources (pc 172, 182); the stream left open is a PrintStream "
        .. "over a LogOutputStream (pc 287-296), which writes to Ant's log and holds no OS resource" },
    { jar = "dom4j-2.1.1", pattern = "OBL", class = "org.dom4j.jaxb.JAXBWriter", method = "setOutput",
      verdict = false, reason = "the FileOutputStream goes to XMLWriter.setOutputStream, which keeps it in the "
        .. "XMLWriter this object holds in a field: ownership passes on (corpus #27)" },
    { jar = "dom4j-2.1.1", pattern = "OBL", class = "org.dom4j.jaxb.JAXBModifier", method = "setOutput",
      verdict = false, reason = "as JAXBWriter.setOutput: the stream is kept by the XMLWriter createXMLWriter "
        .. "stores in the field xmlWriter" },
    { jar = "dom4j-2.1.1", pattern = "OBL", class = "org.dom4j.io.STAXEventWriter", method = "<init>",
      verdict = true, reason = "new FileWriter(file) goes to XMLOutputFactory.createXMLEventWriter, kept as the "
        .. "consumer (an XMLEventConsumer, which has no close): nothing can ever close the file" },
    { jar = "maven-shared-utils", pattern = "OBL", class = "org.apache.maven.shared.utils.io.FileUtils",
      method = "copyStreamToFile", sift = "copyURLToFile", verdict = true,
      reason = "copyStreamToFile throws IOException (pc 72, destination not writable) before the try-with-resources "
        .. "that closes the stream it is given; sift reports it where the stream is opened, in copyURLToFile "
        .. "(URL.openStream, not-closed-on-exception)" },
    { jar = "testng", pattern = "OBL", class = "org.testng.reporters.Files", method = "copyFile", verdict = false,
      reason = "a try-with-resources of javac 9 or 10, which closes through the synthetic $closeResource(Throwable, AutoCloseable) on every path (pc 70 and its handler); FindBugs does not follow it" },
    { jar = "testng", pattern = "OS", class = "org.testng.internal.thread.graph.GraphThreadPoolExecutor", method = "generateFiles", verdict = true,
      reason = "the BufferedWriter over a FileWriter is closed at pc 116 only; append() throwing goes to the catch at pc 128 with the file open (corpus #25)" },
    { jar = "testng", pattern = "OS", class = "org.testng.internal.Utils", method = "writeUtf8File", verdict = true,
      reason = "the OutputStreamWriter over a FileOutputStream is closed at pc 108 only; a write error goes to the catch at pc 114 with the file open (corpus #55)" },
    { jar = "testng", pattern = "OS", class = "org.testng.internal.Utils", method = "createTempFile", verdict = true,
      reason = "the stream is closed on the normal path only: a write before the close throwing leaves it open" },
    { jar = "testng", pattern = "OBL", class = "org.testng.internal.Utils", method = "copyFile", verdict = false,
      reason = "a try-with-resources of javac 9 or 10, which closes through the synthetic $closeResource(Throwable, AutoCloseable) on every path (pc 68 to 115, both streams); FindBugs does not follow it" },
    { jar = "testng", pattern = "OBL", class = "org.testng.xml.Parser", method = "parse", verdict = true,
      reason = "the FileInputStream (pc 128-134) goes to IFileParser.parse and is closed on no path here; for a .yaml suite the parser is Yaml.parse, which hands it to SnakeYAML's load, which does not close it (an .xml suite's SAX parser does)" },
    { jar = "testng", pattern = "OBL", class = "org.testng.internal.Yaml", method = "parse", verdict = true,
      reason = "new FileInputStream(file) (pc 113-125) goes straight to SnakeYAML's Yaml.load(InputStream), which reads it and does not close it; closed on no path" },
    { jar = "testng", pattern = "OBL", class = "org.testng.reporters.FileStringBuffer", method = "flushToFile", verdict = false,
      reason = "a try-with-resources of javac 9 or 10, which closes through the synthetic $closeResource(Throwable, AutoCloseable) on every path (pc 135, 150); FindBugs does not follow it" },
    { jar = "testng", pattern = "OBL", class = "org.testng.reporters.FileStringBuffer", method = "main", verdict = false,
      reason = "a try-with-resources of javac 9 or 10, which closes through the synthetic $closeResource(Throwable, AutoCloseable) on every path (pc 168, 189); FindBugs does not follow it" },
    { jar = "org.apache.felix.main", pattern = "OS", class = "org.apache.felix.framework.cache.BundleCache", method = "copyStreamToFile", verdict = true,
      reason = "in.close() comes before out.close() on the normal path and in the finally, in no try: in.close() throwing leaves the FileOutputStream open (corpus #1)" },
    { jar = "org.apache.felix.main", pattern = "OS", class = "org.apache.felix.framework.cache.BundleArchive", method = "writeId", verdict = true,
      reason = "the FileOutputStream (wrapped in writers) is closed after the write with no try around it: a write error leaves it open (as writeLocation, corpus #56)" },
    { jar = "org.apache.felix.main", pattern = "OS", class = "org.apache.felix.framework.cache.BundleArchive", method = "writeLocation", verdict = true,
      reason = "as writeId (corpus #56)" },
    { jar = "plexus-classworlds", pattern = "OS", class = "org.codehaus.plexus.classworlds.launcher.ConfigurationParser", method = "parse", verdict = true,
      reason = "Files.newInputStream handed to Properties.load and closed on no path (corpus #26)" },
    { jar = "plexus-classworlds", pattern = "OS", class = "org.codehaus.plexus.classworlds.launcher.Launcher", method = "mainWithExitCode", verdict = true,
      reason = "the configuration stream is closed right after configure(), in no finally (corpus #19, #54)" },
    { jar = "stringtemplate-3.2.1", pattern = "OBL", class = "org.antlr.stringtemplate.StringTemplateGroup", method = "loadTemplate", verdict = true,
      reason = "getInputStreamReader(fis) makes new InputStreamReader(fis, encoding), which throws UnsupportedEncodingException for a bad encoding name; the catch (pc 50) closes br, still null then, so the FileInputStream leaks" },
    { jar = "stringtemplate-3.2.1", pattern = "OBL", class = "org.antlr.stringtemplate.PathGroupLoader", method = "locate", verdict = false,
      reason = "a factory: the FileInputStream is returned wrapped in a BufferedReader (corpus #67); the caller owns it" },
  },
}
