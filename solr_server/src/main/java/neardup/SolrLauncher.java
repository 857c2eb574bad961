package neardup;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.solr.client.solrj.embedded.SSLConfig;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Runs one real Solr 9 node in this JVM, on Solr's own embedded Jetty, at
 * http://127.0.0.1:PORT/solr. The caller prepares the solr home (solr.xml and
 * cores). Runs until killed, or until the process given by --exit-with is
 * gone, so a crashed test run leaves no Solr behind. With --keystore it
 * serves HTTPS only, the keystore's password coming from the environment
 * variable NEARDUP_KEYSTORE_PASSWORD (so no process listing shows it).
 *
 * <pre>
 *   SolrLauncher --home DIR [--port 8983] [--keystore FILE.p12] [--exit-with PID]
 * </pre>
 */
public final class SolrLauncher {
  private SolrLauncher() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parse(args);
    if (!opts.containsKey("home")) {
      fail("usage: SolrLauncher --home DIR [--port N] [--keystore FILE] [--exit-with PID]");
    }
    runSolr(Path.of(opts.get("home")), port(opts, 8983), opts.get("keystore"));
    String parent = opts.get("exit-with");
    if (parent != null) {
      exitWith(Long.parseLong(parent));
    }
    Thread.currentThread().join();
  }

  private static void runSolr(Path home, int port, String keystore) throws Exception {
    // The runner builds its own connectors (127.0.0.1, TLS) only in this mode;
    // HTTP/1.1, which every client speaks, also over TLS.
    System.setProperty("jetty.testMode", "true");
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
    JettySolrRunner runner = new JettySolrRunner(home.toString(), config);
    try {
      runner.start();
    } catch (Exception e) {
      fail("solr did not start on port " + port + ": " + e);
    }
    System.out.println("solr listening at " + runner.getBaseUrl());
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

  static void fail(String message) {
    System.err.println("error: " + message);
    System.exit(2);
  }
}
