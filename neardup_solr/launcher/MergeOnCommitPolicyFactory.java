package neardup;

import org.apache.lucene.index.MergePolicy;
import org.apache.lucene.sandbox.index.MergeOnFlushMergePolicy;
import org.apache.solr.core.SolrResourceLoader;
import org.apache.solr.index.MergePolicyFactoryArgs;
import org.apache.solr.index.WrapperMergePolicyFactory;
import org.apache.solr.schema.IndexSchema;

/**
 * Solr's default merge policy, and at each commit and each searcher opened (a soft commit
 * included) the segments smaller than {@code smallSegmentThresholdMB} merged into one before it
 * is opened (Lucene's {@code MergeOnFlushMergePolicy}, waiting at most the index writer's 500 ms).
 *
 * <p>A service's writes each end in a soft commit, and each soft commit flushes a segment of a
 * few records, where a query's band keys are a lookup in every segment (docs/scale.md has the
 * figures). A bulk load's segments are flushed from a buffer of tens of megabytes, so they are
 * left to the merge policy as before.
 *
 * <p>The local Solr names it in the {@code neardup.mergePolicyFactory} property; a Solr without
 * this class uses Solr's default (solrconfig.xml).
 */
public class MergeOnCommitPolicyFactory extends WrapperMergePolicyFactory {
  static final double SMALL_SEGMENT_MB = 1.0;

  private final double smallSegmentMB;

  public MergeOnCommitPolicyFactory(
      SolrResourceLoader loader, MergePolicyFactoryArgs args, IndexSchema schema) {
    super(loader, args, schema);
    Object given = args.remove("smallSegmentThresholdMB");
    smallSegmentMB = given == null ? SMALL_SEGMENT_MB : Double.parseDouble(given.toString());
  }

  @Override
  protected MergePolicy getMergePolicyInstance(MergePolicy wrapped) {
    MergeOnFlushMergePolicy policy = new MergeOnFlushMergePolicy(wrapped);
    policy.setSmallSegmentThresholdMB(smallSegmentMB);
    return policy;
  }
}
