// ImageTree replays the metadata records of a log segment into Kafka's own
// MetadataImage and prints its /image nodes (Kafka's
// org.apache.kafka.image.node classes) as kafka-metadata-shell's `tree`
// does: "name:" per node, text on its own line, two spaces per level.
// Run in source-file mode: java -cp <kafka jars> ImageTree.java SEGMENT.
// Only the children kraftlab's image has are printed.

import java.io.File;
import java.util.List;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.node.MetadataImageNode;
import org.apache.kafka.image.node.printer.MetadataNodePrinter;
import org.apache.kafka.image.node.printer.MetadataNodeRedactionCriteria;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class ImageTree {
    public static void main(String[] args) throws Exception {
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        long offset = -1, time = -1;
        int epoch = -1;
        try (FileRecords records = FileRecords.open(new File(args[0]), false)) {
            for (RecordBatch batch : records.batches()) {
                if (batch.isControlBatch()) continue;
                for (Record r : batch) {
                    ApiMessageAndVersion m = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(r.value()), r.valueSize());
                    delta.replay(m.message());
                    offset = r.offset();
                    time = r.timestamp();
                }
                epoch = batch.partitionLeaderEpoch();
            }
        }
        MetadataImage image = delta.apply(new MetadataProvenance(offset, epoch, time, true));
        Tree p = new Tree();
        MetadataImageNode root = new MetadataImageNode(image);
        p.enterNode("image");
        for (String name : List.of("cluster", "configs", "features", "producerIds", "provenance", "topics")) {
            p.enterNode(name);
            root.child(name).print(p);
            p.leaveNode();
        }
        p.leaveNode();
        System.out.print(p.out);
    }

    static class Tree implements MetadataNodePrinter {
        final StringBuilder out = new StringBuilder();
        int depth;

        public MetadataNodeRedactionCriteria redactionCriteria() {
            return MetadataNodeRedactionCriteria.Disabled.INSTANCE;
        }

        public void enterNode(String name) {
            out.append("  ".repeat(depth)).append(name).append(":\n");
            depth++;
        }

        public void leaveNode() {
            depth--;
        }

        public void output(String text) {
            out.append("  ".repeat(depth)).append(text).append("\n");
        }
    }
}
