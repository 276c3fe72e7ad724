import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.solr.client.solrj.request.CollectionAdminRequest;
import org.apache.solr.cloud.MiniSolrCloudCluster;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Starts a real Solr for solr-dedup's tests, from Solr's own test framework: a standalone node with
 * the project's configset as core {@code collection1} (and as core {@code inplace}, whose schema the
 * in-place profile's tests change), and a SolrCloud of two nodes (embedded
 * ZooKeeper) with a two-shard collection {@code collection1} made from the same configset. Both
 * listen on 127.0.0.1 on free ports; their data lives in a temporary folder that is removed at the
 * end.
 *
 * <p>When both are ready it prints one JSON line on standard output:
 * {@code {"standalone":"http://127.0.0.1:P/solr/collection1","cloud":"http://127.0.0.1:Q/solr/collection1","nodes":["http://127.0.0.1:Q/solr",…]}}
 * ({@code nodes}: each cloud node's base URL, the collection URL's node first). It stops when its
 * standard input closes, so that a test process that ends, however it ends, leaves no JVM behind.
 *
 * <p>{@code cloud4x2} starts, alone, a SolrCloud of four nodes with a collection {@code
 * collection1} of four shards with two NRT replicas each, and prints {@code
 * {"cloud":"…/solr/collection1","nodes":["http://127.0.0.1:P/solr",…]}}.
 *
 * <p>In every mode with a cloud ({@code cloud}, {@code both}, {@code cloud4x2}) its nodes can be
 * stopped and started again (on the same port) by lines on standard input, each answered by one
 * line on standard output:
 *
 * <pre>
 * stop N    stops node N (0-based, as listed), answers "stopped N" once it is down
 * start N   starts it again, answers "started N" once every replica of the collection is active
 *           (two in the two-shard collection, eight in cloud4x2)
 * </pre>
 *
 * A command that fails answers {@code error …}. A reader that never writes (the tests' real Solr)
 * sees no difference: only the end of input counts then. {@code standalone} reads no commands.
 *
 * <p>Usage: {@code java -cp CLASSPATH SolrLauncher CONFIGSET_DIR [standalone|cloud|both|cloud4x2]},
 * where CONFIGSET_DIR holds {@code conf/solrconfig.xml} and {@code conf/managed-schema.xml}.
 *
 * <p>With the system properties {@code solrdedup.plugin.jar} (the index-time signing plugin's jar,
 * {@code solr-plugin/}) and {@code solrdedup.plugin.conf} (its configset's {@code conf} folder), the
 * standalone node also has cores {@code signed} (that configset, the jar in the core's {@code lib/}
 * folder, as a single node installs it) and {@code unstored} (the same with {@code text_t} not
 * stored), and the cloud ({@code cloud}, {@code both}) a two-shard collection {@code signed} from
 * that configset, the jar in each node's shared lib folder ({@code sharedLib} in solr.xml), as
 * SolrCloud installs it. The jar is never on the JVM's class path.
 */
public final class SolrLauncher {
  private static final String CORE = "collection1";
  /** A second standalone core, from the same configset (the in-place profile's tests). */
  private static final String SECOND_CORE = "inplace";
  /** The plugin's cores and collection (see the class comment). */
  private static final String SIGNED = "signed";
  private static final String UNSTORED = "unstored";

  /** The plugin's jar, when given. */
  private static Path pluginJar() {
    String jar = System.getProperty("solrdedup.plugin.jar");
    return jar == null || jar.isEmpty() ? null : Paths.get(jar).toAbsolutePath();
  }

  /** The plugin's configset's conf folder, when given. */
  private static Path pluginConf() {
    String conf = System.getProperty("solrdedup.plugin.conf");
    return conf == null || conf.isEmpty() ? null : Paths.get(conf).toAbsolutePath();
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: SolrLauncher CONFIGSET_DIR [standalone|cloud|both|cloud4x2]");
      System.exit(2);
    }
    Path configset = Paths.get(args[0]).toAbsolutePath();
    String what = args.length == 2 ? args[1] : "both";
    if (!Files.isRegularFile(configset.resolve("conf/solrconfig.xml"))) {
      System.err.println("SolrLauncher: no conf/solrconfig.xml under " + configset);
      System.exit(2);
    }
    // Node names, ZooKeeper and Jetty on the loopback interface only.
    System.setProperty("host", "127.0.0.1");
    System.setProperty("jetty.host", "127.0.0.1");
    System.setProperty("solr.zkHost.bind", "127.0.0.1");
    // Nothing of this test Solr needs to survive the run.
    System.setProperty("solr.autoCommit.maxTime", "15000");
    System.setProperty("solr.directoryFactory", "solr.NRTCachingDirectoryFactory");

    Path work = Files.createTempDirectory("solr-dedup-test-solr-");
    MiniSolrCloudCluster cluster = null;
    try {
      if (what.equals("cloud4x2")) {
        cluster = startCloud(configset, work.resolve("cloud4x2"), 4, 4, 2);
        List<JettySolrRunner> nodes = new ArrayList<>(cluster.getJettySolrRunners());
        StringBuilder line = new StringBuilder("{\"cloud\":\"");
        line.append(nodes.get(0).getBaseUrl()).append('/').append(CORE).append("\",");
        appendNodes(line, nodes);
        line.append('}');
        System.out.println(line);
        System.out.flush();
        serveCommands(System.in, cluster, nodes, 4, 2);
      } else {
        startBoth(configset, work, what);
      }
    } finally {
      stopCloud(cluster);
      deleteTree(work);
    }
    // Solr and ZooKeeper leave non-daemon threads behind.
    System.exit(0);
  }

  /** Shuts the cloud down, if one was started; a failure is reported, not thrown. */
  private static void stopCloud(MiniSolrCloudCluster cluster) {
    if (cluster == null) {
      return;
    }
    try {
      cluster.shutdown();
    } catch (Exception e) {
      System.err.println("SolrLauncher: stopping the cloud: " + e);
    }
  }

  /** The standalone core, the two-shard collection, or both, until standard input ends. */
  private static void startBoth(Path configset, Path work, String what) throws Exception {
    JettySolrRunner node = null;
    MiniSolrCloudCluster cluster = null;
    try {
      String standaloneUrl = null;
      String cloudUrl = null;
      List<JettySolrRunner> nodes = null;
      if (!what.equals("cloud")) {
        node = startStandalone(configset, work.resolve("standalone"));
        standaloneUrl = node.getBaseUrl() + "/" + CORE;
      }
      if (!what.equals("standalone")) {
        cluster = startCloud(configset, work.resolve("cloud"), 2, 2, 1);
        nodes = new ArrayList<>(cluster.getJettySolrRunners());
        cloudUrl = nodes.get(0).getBaseUrl() + "/" + CORE;
      }
      StringBuilder line = new StringBuilder("{");
      if (standaloneUrl != null) {
        line.append("\"standalone\":\"").append(standaloneUrl).append('"');
      }
      if (cloudUrl != null) {
        if (line.length() > 1) {
          line.append(',');
        }
        line.append("\"cloud\":\"").append(cloudUrl).append("\",");
        appendNodes(line, nodes);
      }
      line.append('}');
      System.out.println(line);
      System.out.flush();
      if (cluster != null) {
        serveCommands(System.in, cluster, nodes, 2, 1);
      } else {
        waitForEndOfInput(System.in);
      }
    } finally {
      stopCloud(cluster);
      if (node != null) {
        try {
          node.stop();
        } catch (Exception e) {
          System.err.println("SolrLauncher: stopping the node: " + e);
        }
      }
    }
  }

  private static JettySolrRunner startStandalone(Path configset, Path home) throws Exception {
    // collection1, and a second core from the same configset whose schema the in-place profile's
    // tests change (issue 46), so that the other tests' core keeps YaCy's profile.
    List<String> cores = new ArrayList<>(List.of(CORE, SECOND_CORE));
    for (String core : cores) {
      Path coreDir = home.resolve(core);
      copyTree(configset.resolve("conf"), coreDir.resolve("conf"));
      Files.writeString(coreDir.resolve("core.properties"), "name=" + core + "\n");
    }
    Path jar = pluginJar();
    Path conf = pluginConf();
    if (jar != null && conf != null) {
      // The plugin's cores: its configset, and the jar in the core's lib/ folder.
      for (String core : new String[] {SIGNED, UNSTORED}) {
        Path coreDir = home.resolve(core);
        copyTree(conf, coreDir.resolve("conf"));
        Files.createDirectories(coreDir.resolve("lib"));
        Files.copy(jar, coreDir.resolve("lib").resolve(jar.getFileName()));
        Files.writeString(coreDir.resolve("core.properties"), "name=" + core + "\n");
        cores.add(core);
      }
      Path schema = home.resolve(UNSTORED).resolve("conf/managed-schema.xml");
      String text = Files.readString(schema);
      String stored = "<field name=\"text_t\"          type=\"text_general\" indexed=\"true\" stored=\"true\"/>";
      if (!text.contains(stored)) {
        throw new IllegalStateException("the plugin's schema has no text_t line as expected: " + stored);
      }
      Files.writeString(schema, text.replace(stored, stored.replace("stored=\"true\"", "stored=\"false\"")));
    }
    Files.writeString(home.resolve("solr.xml"), "<solr/>\n");
    JettyConfig config =
        JettyConfig.builder().setPort(0).setContext("/solr").stopAtShutdown(true).build();
    JettySolrRunner node = new JettySolrRunner(home.toString(), config);
    node.start();
    for (String core : cores) {
      if (node.getCoreContainer().getCore(core) == null) {
        throw new IllegalStateException("core " + core + " did not load: "
            + node.getCoreContainer().getCoreInitFailures());
      }
      node.getCoreContainer().getCore(core).close();
    }
    return node;
  }

  private static MiniSolrCloudCluster startCloud(
      Path configset, Path base, int nodes, int shards, int replicas) throws Exception {
    Path jar = pluginJar();
    Path conf = pluginConf();
    boolean plugin = jar != null && conf != null && nodes == 2;
    MiniSolrCloudCluster.Builder builder =
        new MiniSolrCloudCluster.Builder(nodes, base).addConfig("solr-dedup", configset.resolve("conf"));
    if (plugin) {
      // The jar in a folder every node loads at start (sharedLib), as <solr_home>/lib is.
      Path lib = base.resolve("shared-lib");
      Files.createDirectories(lib);
      Files.copy(jar, lib.resolve(jar.getFileName()));
      System.setProperty("solr.allowPaths", lib.toString());
      String xml = MiniSolrCloudCluster.DEFAULT_CLOUD_SOLR_XML.replaceFirst(
          "<solr>", "<solr>\n  <str name=\"sharedLib\">" + lib + "</str>");
      builder.withSolrXml(xml).addConfig("solr-dedup-signed", conf);
    }
    MiniSolrCloudCluster cluster = builder.build();
    CollectionAdminRequest.createCollection(CORE, "solr-dedup", shards, replicas)
        .process(cluster.getSolrClient());
    cluster.waitForActiveCollection(CORE, 120, TimeUnit.SECONDS, shards, shards * replicas);
    if (plugin) {
      CollectionAdminRequest.createCollection(SIGNED, "solr-dedup-signed", shards, replicas)
          .process(cluster.getSolrClient());
      cluster.waitForActiveCollection(SIGNED, 120, TimeUnit.SECONDS, shards, shards * replicas);
    }
    return cluster;
  }

  /** {@code "nodes":["…/solr",…]}, in the order that node numbers refer to. */
  private static void appendNodes(StringBuilder line, List<JettySolrRunner> nodes) {
    line.append("\"nodes\":[");
    for (int i = 0; i < nodes.size(); i++) {
      line.append(i > 0 ? "," : "").append('"').append(nodes.get(i).getBaseUrl()).append('"');
    }
    line.append(']');
  }

  /**
   * Stops and starts nodes as standard input asks, one answer line each, until the input ends.
   * A node is started again on its port, so that its replicas come back as they were; "started"
   * waits until all {@code shards * replicas} replicas of the collection are active.
   */
  private static void serveCommands(
      InputStream in,
      MiniSolrCloudCluster cluster,
      List<JettySolrRunner> nodes,
      int shards,
      int replicas) {
    BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    try {
      String line;
      while ((line = reader.readLine()) != null) {
        String[] words = line.trim().split("\\s+");
        String answer;
        try {
          if (words.length != 2) {
            throw new IllegalArgumentException("expected 'stop N' or 'start N'");
          }
          int n = Integer.parseInt(words[1]);
          JettySolrRunner node = nodes.get(n);
          if (words[0].equals("stop")) {
            cluster.stopJettySolrRunner(node);
            cluster.waitForJettyToStop(node);
            answer = "stopped " + n;
          } else if (words[0].equals("start")) {
            cluster.startJettySolrRunner(node, true);
            cluster.waitForNode(node, 120);
            cluster.waitForActiveCollection(CORE, 120, TimeUnit.SECONDS, shards, shards * replicas);
            answer = "started " + n;
          } else {
            throw new IllegalArgumentException("expected 'stop N' or 'start N'");
          }
        } catch (Exception e) {
          answer = "error " + e.toString().replace('\n', ' ');
        }
        System.out.println(answer);
        System.out.flush();
      }
    } catch (IOException e) {
      // A broken pipe is an end too.
    }
  }

  private static void waitForEndOfInput(InputStream in) {
    byte[] buf = new byte[256];
    try {
      while (in.read(buf) != -1) {
        // Anything written is ignored: only the end of input counts.
      }
    } catch (IOException e) {
      // A broken pipe is an end too.
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isDirectory(f)) {
          copyTree(f, to.resolve(f.getFileName().toString()));
        } else {
          Files.copy(f, to.resolve(f.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  private static void deleteTree(Path root) {
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.delete(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
          Files.delete(dir);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      System.err.println("SolrLauncher: could not remove " + root + ": " + e);
    }
  }
}
