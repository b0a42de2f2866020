package org.apache.flink.streaming.connectors.kafka.internals;

import java.io.Serializable;

/**
 * Stand-in for the legacy Kafka connector's partition descriptor, written for the harness so that
 * every Flink release can produce the incident state without the connector jar. Same class name
 * and same fields as the connector's class (spec metadata-format.md section 12), so Kryo writes the
 * same bytes: fields in alphabetical order cachedHash, partition, topic.
 */
public final class KafkaTopicPartition implements Serializable {
    private static final long serialVersionUID = 722083576322742325L;

    private final String topic;
    private final int partition;
    private final int cachedHash;

    public KafkaTopicPartition(String topic, int partition) {
        this.topic = topic;
        this.partition = partition;
        this.cachedHash = 31 * topic.hashCode() + partition;
    }

    public String getTopic() {
        return topic;
    }

    public int getPartition() {
        return partition;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KafkaTopicPartition)) {
            return false;
        }
        KafkaTopicPartition other = (KafkaTopicPartition) o;
        return partition == other.partition && topic.equals(other.topic);
    }

    @Override
    public int hashCode() {
        return cachedHash;
    }

    @Override
    public String toString() {
        return "KafkaTopicPartition{topic='" + topic + "', partition=" + partition + '}';
    }
}
