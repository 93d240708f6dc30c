import { DataTypes } from 'sequelize';

/**
 * Column helpers shared by the model definitions; the migrations own the real schema. They are
 * functions because Sequelize mutates attribute objects, so one object must not serve two columns.
 */
export const uuidPk = () => ({ type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 });
export const jsonb = (defaultValue: unknown) => ({ type: DataTypes.JSONB, allowNull: false, defaultValue });
export const nullableText = () => ({ type: DataTypes.TEXT, allowNull: true });
export const requiredText = () => ({ type: DataTypes.TEXT, allowNull: false });
export const nullableInt = () => ({ type: DataTypes.INTEGER, allowNull: true });
export const modelOptions = { underscored: true, timestamps: true, createdAt: 'created_at', updatedAt: 'updated_at' } as const;

export interface Timestamps {
  created_at: Date;
  updated_at: Date;
}
