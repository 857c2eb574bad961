package neardup;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.solr.client.solrj.embedded.SSLConfig;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * Runs one real Solr 9 node in this JVM, on Solr's own embedded Jetty, at
 * http://127.0.0.1:PORT/solr. The caller prepares the solr home (solr.xml and
 * cores). Runs until killed, or until the process given by --exit-with is
 * gone, so a crashed test run leaves no Solr behind. With --keystore it
 * serves HTTPS only, the keystore's password coming from the environment
 * variable NEARDUP_KEYSTORE_PASSWORD (so no process listing shows it).
 *
 * <p>For a local SolrCloud the same class runs the other parts, each in its
 * own process so that one can be stopped alone: ZooKeeper (--zookeeper, its
 * data folder) on 127.0.0.1, and nodes that join it (--zk-host).
 *
 * <pre>
 *   SolrLauncher --home DIR [--port 8983] [--zk-host 127.0.0.1:9983] [--keystore FILE.p12] [--exit-with PID]
 *   SolrLauncher --zookeeper DIR [--port 9983] [--exit-with PID]
 * </pre>
 */
public final class SolrLauncher {
  private SolrLauncher() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parse(args);
    if (opts.containsKey("zookeeper")) {
      runZooKeeper(Path.of(opts.get("zookeeper")), port(opts, 9983));
    } else if (opts.containsKey("home")) {
      runSolr(Path.of(opts.get("home")), port(opts, 8983), opts.get("keystore"), opts.get("zk-host"));
    } else {
      fail("usage: SolrLauncher --home DIR [--port N] [--zk-host HOST:PORT] [--keystore FILE] [--exit-with PID]"
          + " | --zookeeper DIR [--port N] [--exit-with PID]");
    }
    String parent = opts.get("exit-with");
    if (parent != null) {
      exitWith(Long.parseLong(parent));
    }
    Thread.currentThread().join();
  }

  private static void runSolr(Path home, int port, String keystore, String zkHost) throws Exception {
    // The runner builds its own connectors (127.0.0.1, TLS) only in this mode;
    // HTTP/1.1, which every client speaks, also over TLS.
    System.setProperty("jetty.testMode", "true");
    // The configset's /buckets handler (BucketsHandler, in this jar): a Solr without the class leaves it out.
    System.setProperty("neardup.buckets", "true");
    // Small segments merged at each commit (MergeOnCommitPolicyFactory, in this jar).
    System.setProperty("neardup.mergePolicyFactory", "neardup.MergeOnCommitPolicyFactory");
    // Nodes of a cloud talk to each other as clients do: HTTP/1.1.
    System.setProperty("solr.http1", "true");
    JettyConfig.Builder builder =
        JettyConfig.builder()
            .setPort(port)
            .setContext("/solr")
            .stopAtShutdown(true)
            .useOnlyHttp1(true);
    if (keystore != null) {
      String password = System.getenv().getOrDefault("NEARDUP_KEYSTORE_PASSWORD", "");
      builder.withSSLConfig(new SSLConfig(true, false, keystore, password, keystore, password));
    }
    JettyConfig config = builder.build();
    // Node properties fill solr.xml's ${...}; with zkHost the node joins that cloud.
    Properties nodeProps = new Properties();
    nodeProps.setProperty("hostPort", Integer.toString(port));
    if (zkHost != null) {
      nodeProps.setProperty("zkHost", zkHost);
    }
    JettySolrRunner runner = new JettySolrRunner(home.toString(), nodeProps, config);
    try {
      runner.start();
    } catch (Exception e) {
      fail("solr did not start on port " + port + ": " + why(e));
    }
    System.out.println("solr listening at " + runner.getBaseUrl());
  }

  /** A standalone ZooKeeper on 127.0.0.1 only, in a background thread. */
  private static void runZooKeeper(Path dataDir, int port) throws Exception {
    System.setProperty("zookeeper.admin.enableServer", "false"); // else a web console on 8080
    Properties props = new Properties();
    props.setProperty("dataDir", dataDir.toAbsolutePath().toString());
    props.setProperty("clientPort", Integer.toString(port));
    props.setProperty("clientPortAddress", "127.0.0.1");
    props.setProperty("tickTime", "2000");
    props.setProperty("maxClientCnxns", "0");
    QuorumPeerConfig quorum = new QuorumPeerConfig();
    quorum.parseProperties(props);
    ServerConfig config = new ServerConfig();
    config.readFrom(quorum);
    ZooKeeperServerMain zookeeper = new ZooKeeperServerMain();
    Thread serving =
        new Thread(
            () -> {
              try {
                zookeeper.runFromConfig(config);
              } catch (Exception e) {
                fail("zookeeper stopped on port " + port + ": " + e);
              }
            },
            "zookeeper");
    serving.start();
    System.out.println("zookeeper listening at 127.0.0.1:" + port);
  }

  private static void exitWith(long pid) {
    ProcessHandle.of(pid)
        .ifPresentOrElse(
            p -> p.onExit().thenRun(() -> System.exit(0)),
            () -> System.exit(0));
  }

  static int port(Map<String, String> opts, int fallback) {
    return Integer.parseInt(opts.getOrDefault("port", Integer.toString(fallback)));
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> opts = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        fail("unexpected argument " + args[i]);
      }
      opts.put(args[i].substring(2), args[i + 1]);
    }
    if (args.length % 2 != 0) {
      fail("option " + args[args.length - 1] + " needs a value");
    }
    return opts;
  }

  /** An exception with what it suppressed and what caused it: Jetty's stop after a failed start hides the failure. */
  static String why(Throwable e) {
    StringBuilder out = new StringBuilder(String.valueOf(e));
    for (Throwable hidden : e.getSuppressed()) {
      out.append("; suppressed: ").append(why(hidden));
    }
    if (e.getCause() != null && e.getCause() != e) {
      out.append("; caused by: ").append(why(e.getCause()));
    }
    return out.toString();
  }

  static void fail(String message) {
    System.err.println("error: " + message);
    System.exit(2);
  }
}
